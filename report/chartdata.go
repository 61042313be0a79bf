package report

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"

	"assay/config"
	"assay/stats"
)

// The data of the charts, aggregated here so that a chart's data grows with
// the number of conditions and metrics, not of samples.

// histogramBins is how many bins a 0–1 metric's histogram has.
const histogramBins = 10

// Distribution returns the bins of a metric's scale and, for each, the share
// (in %) of the scores that fall in it.
func Distribution(sc config.Scale, groups []SampleScores) (bins []string, shares []float64) {
	switch sc {
	case config.ScaleLikert:
		bins = []string{"1", "2", "3", "4", "5"}
	case config.ScalePass:
		bins = []string{"fail", "pass"}
	default:
		for i := range histogramBins {
			bins = append(bins, fmt.Sprintf("%.1f", float64(i)/histogramBins)) // the tenth's lower edge
		}
	}
	counts := make([]int, len(bins))
	total := 0
	for _, g := range groups {
		for _, v := range g.Values() {
			counts[binOf(sc, v, len(bins))]++
			total++
		}
	}
	shares = make([]float64, len(bins))
	for i, n := range counts {
		if total > 0 {
			shares[i] = Round(100*float64(n)/float64(total), 1)
		}
	}
	return bins, shares
}

// binOf is the bin of value v: 1–5 rounded to the nearest integer, pass
// from 0.5, and 0–1 in tenths with 1 in the last bin.
func binOf(sc config.Scale, v float64, bins int) int {
	var i int
	switch sc {
	case config.ScaleLikert:
		i = int(math.Round(v)) - 1
	case config.ScalePass:
		if v >= 0.5 {
			i = 1
		}
	default:
		i = int(math.Floor(v * float64(bins)))
	}
	return min(max(i, 0), bins-1)
}

// RepetitionStds returns the standard deviation over repetitions of every
// sample that has at least two scores.
func RepetitionStds(groups []SampleScores) []float64 {
	var out []float64
	for _, g := range groups {
		if len(g.Values()) >= 2 {
			_, std := stats.Describe(g.Values())
			out = append(out, std)
		}
	}
	return out
}

// HasRepetitions reports whether some sample has two scores of a metric, so
// that a spread over repetitions exists.
func (r *Report) HasRepetitions() bool {
	for i := range r.Metrics {
		for _, groups := range r.samples[i] {
			if len(RepetitionStds(groups)) > 0 {
				return true
			}
		}
	}
	return false
}

// FiveNumbers is a box plot's min, first quartile, median, third quartile and max.
func FiveNumbers(values []float64) []float64 {
	if len(values) == 0 {
		return nil
	}
	v := slices.Clone(values)
	slices.Sort(v)
	q := func(p float64) float64 { return Round(stat.Quantile(p, stat.LinInterp, v, nil), 3) }
	return []float64{Round(v[0], 3), q(0.25), q(0.5), q(0.75), Round(v[len(v)-1], 3)}
}

// Point is a place on the A-against-B scatter and how many samples sit there.
type Point struct {
	X, Y  float64
	Count int
}

// PairedPoints places every sample scored under both sides at (A mean, B
// mean), one point per place: samples that land on the same place (common
// with 1–5 scores) are counted, not drawn over each other.
func PairedPoints(a, b map[int64]float64) []Point {
	at := map[[2]float64]int{}
	var order [][2]float64
	for _, id := range slices.Sorted(maps.Keys(a)) {
		y, ok := b[id]
		if !ok {
			continue
		}
		key := [2]float64{Round(a[id], 3), Round(y, 3)}
		if at[key] == 0 {
			order = append(order, key)
		}
		at[key]++
	}
	out := make([]Point, len(order))
	for i, k := range order {
		out[i] = Point{X: k[0], Y: k[1], Count: at[k]}
	}
	return out
}

// Values returns the score groups of samples, as the stats package takes them.
func Values(groups []SampleScores) [][]float64 {
	out := make([][]float64, len(groups))
	for i, g := range groups {
		out[i] = g.Values()
	}
	return out
}

// Round rounds v to d decimals, to keep chart data short.
func Round(v float64, d int) float64 {
	p := math.Pow(10, float64(d))
	return math.Round(v*p) / p
}
