package web

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"

	"assay/runner/stats"
)

// This file aggregates scores for the charts, server-side, so that a chart's
// data grows with the number of conditions and metrics, not of samples.

// histogramBins is how many bins a 0–1 metric's histogram has.
const histogramBins = 10

// distribution returns the bins of a metric's scale and, for each, the share
// (in %) of the scores that fall in it.
func distribution(sc scale, groups []sampleScores) (bins []string, shares []float64) {
	switch sc {
	case scaleLikert:
		bins = []string{"1", "2", "3", "4", "5"}
	case scalePass:
		bins = []string{"fail", "pass"}
	default:
		for i := range histogramBins {
			bins = append(bins, fmt.Sprintf("%.1f", float64(i)/histogramBins)) // the tenth's lower edge
		}
	}
	counts := make([]int, len(bins))
	total := 0
	for _, g := range groups {
		for _, v := range g.Values {
			counts[binOf(sc, v, len(bins))]++
			total++
		}
	}
	shares = make([]float64, len(bins))
	for i, n := range counts {
		if total > 0 {
			shares[i] = round(100*float64(n)/float64(total), 1)
		}
	}
	return bins, shares
}

// binOf is the bin of value v: 1–5 rounded to the nearest integer, pass
// from 0.5, and 0–1 in tenths with 1 in the last bin.
func binOf(sc scale, v float64, bins int) int {
	var i int
	switch sc {
	case scaleLikert:
		i = int(math.Round(v)) - 1
	case scalePass:
		i = 0
		if v >= 0.5 {
			i = 1
		}
	default:
		i = int(math.Floor(v * float64(bins)))
	}
	return min(max(i, 0), bins-1)
}

// repetitionStds returns the standard deviation over repetitions of every
// sample that has at least two scores.
func repetitionStds(groups []sampleScores) []float64 {
	var out []float64
	for _, g := range groups {
		if len(g.Values) >= 2 {
			_, std := stats.Describe(g.Values)
			out = append(out, std)
		}
	}
	return out
}

// fiveNumbers is a box plot's min, first quartile, median, third quartile and max.
func fiveNumbers(values []float64) []float64 {
	if len(values) == 0 {
		return nil
	}
	v := slices.Clone(values)
	slices.Sort(v)
	q := func(p float64) float64 { return round(stat.Quantile(p, stat.LinInterp, v, nil), 3) }
	return []float64{round(v[0], 3), q(0.25), q(0.5), q(0.75), round(v[len(v)-1], 3)}
}

// point is a place on the A-against-B scatter and how many samples sit there.
type point struct {
	X, Y  float64
	Count int
}

// pairedPoints places every sample scored under both sides at (A mean, B
// mean), one point per place: samples that land on the same place (common
// with 1–5 scores) are counted, not drawn over each other.
func pairedPoints(a, b map[int64]float64) []point {
	at := map[[2]float64]int{}
	var order [][2]float64
	for _, id := range slices.Sorted(maps.Keys(a)) {
		y, ok := b[id]
		if !ok {
			continue
		}
		key := [2]float64{round(a[id], 3), round(y, 3)}
		if at[key] == 0 {
			order = append(order, key)
		}
		at[key]++
	}
	out := make([]point, len(order))
	for i, k := range order {
		out[i] = point{X: k[0], Y: k[1], Count: at[k]}
	}
	return out
}

// round rounds v to d decimals, to keep chart data short.
func round(v float64, d int) float64 {
	p := math.Pow(10, float64(d))
	return math.Round(v*p) / p
}
