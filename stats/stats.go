// Package stats computes the statistics a report shows: means, spreads and
// confidence intervals over samples, and paired comparisons between
// conditions or runs.
//
// Repetitions of one sample are not independent observations of the agent's
// quality: they share the question. So every interval here treats the sample
// as the unit (a cluster) and its repetitions as a way to estimate that
// sample's mean more precisely. Counting repetitions as extra samples would
// shrink the interval by sqrt(repetitions) without any new evidence.
//
// Every value returned is finite, so a report can be written as JSON: where a
// quantity is undefined (no data, or a single sample) it is reported as zero
// or as a degenerate interval, as each function documents. Inputs must be
// finite numbers.
package stats

import (
	"math"
	"sync"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Summary describes one metric over the samples of a condition.
type Summary struct {
	Mean    float64 `json:"mean"`
	Std     float64 `json:"std"`
	Stderr  float64 `json:"stderr"`
	CILo    float64 `json:"ci_lo"`
	CIHi    float64 `json:"ci_hi"`
	N       int     `json:"n"`       // number of scores
	Samples int     `json:"samples"` // number of samples (clusters) with at least one score
}

// Describe returns the mean and the sample standard deviation (divisor n-1)
// of values. The mean of no values is 0, and the standard deviation of fewer
// than two values is 0.
func Describe(values []float64) (mean, std float64) {
	switch len(values) {
	case 0:
		return 0, 0
	case 1:
		return values[0], 0
	}
	return stat.MeanStdDev(values, nil)
}

// FromSums is Describe for values known only by their count, sum and sum of
// squares, as a scan that folds many rows keeps them: the same mean and
// sample standard deviation, up to rounding.
func FromSums(n int, sum, sumSq float64) (mean, std float64) {
	switch n {
	case 0:
		return 0, 0
	case 1:
		return sum, 0
	}
	mean = sum / float64(n)
	return mean, math.Sqrt(max(0, (sumSq-float64(n)*mean*mean)/float64(n-1)))
}

// Clustered summarises a metric over samples: groups[i] holds the scores of
// sample i (its repetitions, and judge repetitions if any). Samples without
// scores are skipped.
//
// Mean is the mean of the per-sample means, so every sample weighs the same
// whatever its number of scores. Std is the sample standard deviation of the
// per-sample means, Stderr is Std/sqrt(k) and the 95% confidence interval is
// Mean ± t(0.975, k-1)·Stderr, where k is Samples. N counts every score.
//
// With one sample there is no spread to estimate: Std and Stderr are 0 and
// the interval is [Mean, Mean]. Samples == 1 tells a reader the interval is
// not evidence of precision. With no scores every field is 0.
func Clustered(groups [][]float64) Summary {
	var means []float64
	n := 0
	for _, g := range groups {
		if len(g) == 0 {
			continue
		}
		m, _ := Describe(g)
		means = append(means, m)
		n += len(g)
	}
	k := len(means)
	if k == 0 {
		return Summary{}
	}
	mean, std := Describe(means)
	s := Summary{
		Mean:    mean,
		Std:     std,
		CILo:    mean,
		CIHi:    mean,
		N:       n,
		Samples: k,
	}
	if k < 2 {
		return s
	}
	s.Stderr = stat.StdErr(std, float64(k))
	half := TQuantile(0.975, k-1) * s.Stderr
	s.CILo, s.CIHi = mean-half, mean+half
	return s
}

// TQuantile returns the p quantile of Student's t distribution with df
// degrees of freedom, e.g. TQuantile(0.975, 9) ≈ 2.262157. Each is
// computed once (an inverse of the incomplete beta function): a report
// sliced 200 ways asks for a few hundred, mostly the same, and computing
// each was an eighth of its time.
func TQuantile(p float64, df int) float64 {
	k := quantileKey{p, df}
	if q, ok := tQuantiles.Load(k); ok {
		return q.(float64)
	}
	q := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(df)}.Quantile(p)
	tQuantiles.Store(k, q)
	return q
}

// TQuantileNu is TQuantile for degrees of freedom that need not be whole
// (Welch–Satterthwaite's), computed each time.
func TQuantileNu(p, nu float64) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: nu}.Quantile(p)
}

// WelchDF is the Welch–Satterthwaite degrees of freedom of a difference of
// two independent means with standard errors seA and seB over nA and nB
// units; 1 at least, and nA+nB−2 when both standard errors are 0.
func WelchDF(seA float64, nA int, seB float64, nB int) float64 {
	va, vb := seA*seA, seB*seB
	den := 0.0
	if nA > 1 {
		den += va * va / float64(nA-1)
	}
	if nB > 1 {
		den += vb * vb / float64(nB-1)
	}
	if den == 0 {
		return math.Max(float64(nA+nB-2), 1)
	}
	return math.Max((va+vb)*(va+vb)/den, 1)
}

type quantileKey struct {
	p  float64
	df int
}

// tQuantiles holds the quantiles computed, by quantileKey.
var tQuantiles sync.Map

// RepetitionSpread is the mean over samples of the standard deviation of
// their repetitions: how much the same question's score moves from one
// repetition to the next. Only samples with at least two scores count; with
// none it is 0.
func RepetitionSpread(groups [][]float64) float64 {
	var sum float64
	k := 0
	for _, g := range groups {
		if len(g) < 2 {
			continue
		}
		_, std := Describe(g)
		sum += std
		k++
	}
	if k == 0 {
		return 0
	}
	return sum / float64(k)
}

// Disagreement is the share of samples, among those with at least two
// scores, whose scores are not all the same (within 1e-9). With no such
// sample it is 0.
func Disagreement(groups [][]float64) float64 {
	disagree, k := 0, 0
	for _, g := range groups {
		if len(g) < 2 {
			continue
		}
		k++
		for _, v := range g[1:] {
			if math.Abs(v-g[0]) >= tieTolerance {
				disagree++
				break
			}
		}
	}
	if k == 0 {
		return 0
	}
	return float64(disagree) / float64(k)
}
