package stats

import (
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/stat"
)

// DefaultIterations is the number of bootstrap resamples PairedBootstrap
// draws when asked for zero or fewer.
const DefaultIterations = 2000

// tieTolerance is how close two scores must be to count as the same.
const tieTolerance = 1e-9

// pcgStream is the fixed second word of the PCG state, so that a seed alone
// decides every resample.
const pcgStream = 0x9e3779b97f4a7c15

// Paired compares a with b sample by sample.
type Paired struct {
	MeanDiff float64 `json:"mean_diff"` // mean of a[i]-b[i]
	CILo     float64 `json:"ci_lo"`     // 95% paired bootstrap percentile interval of MeanDiff
	CIHi     float64 `json:"ci_hi"`
	Wins     int     `json:"wins"`   // samples where a scored higher
	Ties     int     `json:"ties"`   // samples where |a-b| < 1e-9
	Losses   int     `json:"losses"` // samples where b scored higher
	N        int     `json:"n"`      // pairs compared
}

// PairedBootstrap compares a[i] with b[i], where both are the mean score of
// the same sample i under two conditions (or in two runs). Pairing removes
// the variation between questions, which is usually far larger than the
// difference being measured.
//
// The interval resamples the pairs with replacement iters times (zero or
// fewer means DefaultIterations) and takes the 2.5th and 97.5th percentiles
// of the resampled mean differences. The same seed gives the same interval.
// If the slices differ in length only the first min(len(a), len(b)) pairs
// are compared; N says how many. With no pairs every field is 0; with one
// pair the interval is [MeanDiff, MeanDiff].
func PairedBootstrap(a, b []float64, iters int, seed uint64) Paired {
	n := min(len(a), len(b))
	p := Paired{N: n}
	if n == 0 {
		return p
	}
	diffs := make([]float64, n)
	for i := range diffs {
		diffs[i] = a[i] - b[i]
		switch {
		case diffs[i] >= tieTolerance:
			p.Wins++
		case diffs[i] <= -tieTolerance:
			p.Losses++
		default:
			p.Ties++
		}
	}
	p.MeanDiff, _ = Describe(diffs)
	boot := bootstrapMeans(diffs, iters, seed)
	p.CILo = stat.Quantile(0.025, stat.Empirical, boot, nil)
	p.CIHi = stat.Quantile(0.975, stat.Empirical, boot, nil)
	return p
}

// bootstrapMeans returns the sorted means of iters resamples of values.
func bootstrapMeans(values []float64, iters int, seed uint64) []float64 {
	if iters <= 0 {
		iters = DefaultIterations
	}
	if g, ok := groupItems(values); ok {
		return groupedMeans(g, iters, seed)
	}
	return indexedMeans(values, iters, seed)
}

// indexedMeans is bootstrapMeans drawing n indices per resample.
func indexedMeans(values []float64, iters int, seed uint64) []float64 {
	rng := newIndexer(seed)
	n := len(values)
	means := make([]float64, iters)
	for i := range means {
		var sum float64
		for range n {
			sum += values[rng.intN(n)]
		}
		means[i] = sum / float64(n)
	}
	slices.Sort(means)
	return means
}

// groupedMeans is bootstrapMeans over grouped values: each resample's mean
// from its counts of the distinct values.
func groupedMeans(g grouped[float64], iters int, seed uint64) []float64 {
	src := rand.NewPCG(seed, pcgStream)
	counts := make([]float64, len(g.items))
	means := make([]float64, iters)
	for i := range means {
		g.draw(src, counts)
		var sum float64
		for k, c := range counts {
			sum += c * g.items[k]
		}
		means[i] = sum / float64(g.n)
	}
	slices.Sort(means)
	return means
}
