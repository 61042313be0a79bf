package stats

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"
)

// Components split the variance of one metric's scores under one condition
// into three parts, on the metric's scale (squared): between samples (the
// questions differ), agent (the same question answered again gives another
// answer: between repetitions) and judge (the same answer scored again
// gives another score: between judge repetitions and the judges of a
// panel). Total is their sum.
//
// They are the method-of-moments (ANOVA) estimators of the nested
// random-effects model y = μ + a(sample) + b(answer in sample) + e(score),
// for unbalanced data (Searle, Casella & McCulloch, Variance Components,
// 1992, §4.7): the three are solved together from the mean squares, and
// then each one below 0 is set to 0 (the others keep the values solved
// with it, as the standard estimators do). A part the data cannot tell
// apart is 0 and not measured: with one score per answer the judge's share
// is inside the agent's, with one answer per sample the agent's inside the
// samples'.
type Components struct {
	Sample, Agent, Judge, Total float64
	AgentMeasured               bool // some sample has two answers or more
	JudgeMeasured               bool // some answer has two scores or more
	Samples                     int
	// AgentClamped and SampleClamped say the part came out below 0 (by
	// Clamped, on the metric's scale squared) and is given as 0: chance
	// alone can do it when the part is small.
	AgentClamped, SampleClamped bool
	AgentSolved, SampleSolved   float64 // as solved, before clamping
}

// Shares are the parts as fractions of the total (0 when it is 0).
func (c Components) Shares() (sample, agent, judge float64) {
	if c.Total <= 0 {
		return 0, 0, 0
	}
	return c.Sample / c.Total, c.Agent / c.Total, c.Judge / c.Total
}

// sampleMoments are what one sample adds to the sums of squares: they add
// up over samples, so a bootstrap resample costs one pass over samples.
type sampleMoments struct {
	n        float64 // scores
	answers  float64
	sum      float64 // of scores
	sumNij2  float64 // Σ over answers of (scores of the answer)²
	ssWithin float64 // Σ (score − its answer's mean)²
	ssAnswer float64 // Σ over answers of n_ij (answer mean − sample mean)²
	// What the sums divide by n, computed once for every resample.
	sumSqOverN, sumNij2OverN float64
}

// key is the moments as a map key, equal when they are: their bits, −0 as
// +0 as == has it (moments are never NaN). A map keyed by the moments
// themselves hashes each of their fields apart: most of grouping's time.
func (m sampleMoments) key() [8]uint64 {
	return [8]uint64{floatBits(m.n), floatBits(m.answers), floatBits(m.sum), floatBits(m.sumNij2), floatBits(m.ssWithin), floatBits(m.ssAnswer),
		floatBits(m.sumSqOverN), floatBits(m.sumNij2OverN)}
}

// floatBits are x's bits, those of +0 for −0.
func floatBits(x float64) uint64 {
	if x == 0 {
		return 0
	}
	return math.Float64bits(x)
}

// momentsOf computes one sample's moments, an answer at a time: each
// answer's size and mean are kept for the sum that needs the sample's mean.
// Its room is reused from sample to sample.
type momentsOf struct {
	m     sampleMoments
	sizes []float64
	means []float64
}

// answer adds an answer's scores; an empty answer is skipped.
func (b *momentsOf) answer(scores []float64) {
	if len(scores) == 0 {
		return
	}
	mean, _ := Describe(scores)
	nij := float64(len(scores))
	b.m.n += nij
	b.m.answers++
	b.m.sum += mean * nij
	b.m.sumNij2 += nij * nij
	for _, v := range scores {
		b.m.ssWithin += (v - mean) * (v - mean)
	}
	b.sizes, b.means = append(b.sizes, nij), append(b.means, mean)
}

// take returns the sample's moments, false when it had no score, and
// starts the next sample.
func (b *momentsOf) take() (sampleMoments, bool) {
	m := b.m
	sizes, means := b.sizes, b.means
	b.m, b.sizes, b.means = sampleMoments{}, b.sizes[:0], b.means[:0]
	if m.n == 0 {
		return m, false
	}
	m.sumSqOverN, m.sumNij2OverN = m.sum*m.sum/m.n, m.sumNij2/m.n
	sampleMean := m.sum / m.n
	for k, mean := range means {
		m.ssAnswer += sizes[k] * (mean - sampleMean) * (mean - sampleMean)
	}
	return m, true
}

// sums add up the samples' moments: what the parts are solved from.
type sums struct {
	N, A, S, sum, sumSq, sumNi2, sumNij2, sumNij2OverNi, ssE, ssB float64
}

func (a *sums) add(m *sampleMoments) {
	a.N += m.n
	a.A += m.answers
	a.S++
	a.sum += m.sum
	a.sumSq += m.sumSqOverN
	a.sumNi2 += m.n * m.n
	a.sumNij2 += m.sumNij2
	a.sumNij2OverNi += m.sumNij2OverN
	a.ssE += m.ssWithin
	a.ssB += m.ssAnswer
}

// components solves the expected mean squares for the three parts.
func (a *sums) components() Components {
	N, A, S, sum, sumSq, sumNi2, sumNij2, sumNij2OverNi, ssE, ssB := a.N, a.A, a.S, a.sum, a.sumSq, a.sumNi2, a.sumNij2, a.sumNij2OverNi, a.ssE, a.ssB
	c := Components{Samples: int(S), AgentMeasured: A > S, JudgeMeasured: N > A}
	if S == 0 {
		return c
	}
	ssA := sumSq - sum*sum/N
	dfE, dfB, dfA := N-A, A-S, S-1
	var msE float64
	if dfE > 0 {
		msE = ssE / dfE
		c.Judge = msE
	}
	if dfB > 0 {
		k1 := (N - sumNij2OverNi) / dfB
		if k1 > 0 {
			c.AgentSolved = (ssB/dfB - msE) / k1
		}
	}
	if dfA > 0 {
		k2 := (sumNij2OverNi - sumNij2/N) / dfA
		k3 := (N - sumNi2/N) / dfA
		if k3 > 0 {
			// With the agent's part as solved, not as clamped: in a balanced
			// run this is (MS_samples − MS_answers) / (answers × scores).
			c.SampleSolved = (ssA/dfA - msE - k2*c.AgentSolved) / k3
		}
	}
	c.Agent, c.Sample = c.AgentSolved, c.SampleSolved
	c.AgentClamped, c.SampleClamped = c.Agent < -roundingNoise, c.Sample < -roundingNoise
	for _, v := range []*float64{&c.Sample, &c.Agent, &c.Judge} {
		if *v < roundingNoise {
			*v = 0 // below 0, or what rounding leaves of scores that do not vary
		}
	}
	c.Total = c.Sample + c.Agent + c.Judge
	return c
}

// roundingNoise is a variance too small to be anything but rounding, on
// scales of 0–1 to 1–5.
const roundingNoise = 1e-12

// Decompose splits the variance of scores given as samples → answers (one
// per repetition) → scores of that answer (one per judge repetition, and
// per judge of a panel). Empty samples and answers are skipped.
func Decompose(samples [][][]float64) Components {
	return all(moments(samples)).components()
}

// all adds up every sample's moments.
func all(ms []sampleMoments) *sums {
	var a sums
	for i := range ms {
		a.add(&ms[i])
	}
	return &a
}

func moments(samples [][][]float64) []sampleMoments {
	return momentsEach(len(samples), func(i int, yield func([]float64)) {
		for _, scores := range samples[i] {
			yield(scores)
		}
	})
}

// momentsEach is moments over n samples whose answers each yields.
func momentsEach(n int, each func(i int, yield func(scores []float64))) []sampleMoments {
	ms := make([]sampleMoments, 0, n)
	var b momentsOf
	for i := range n {
		each(i, b.answer)
		if m, ok := b.take(); ok {
			ms = append(ms, m)
		}
	}
	return ms
}

// resample adds up the moments of n samples drawn with replacement: add's
// sums, in locals a compiler keeps in registers.
func resample(ms []sampleMoments, rng indexer) *sums {
	var N, A, sum, sumSq, sumNi2, sumNij2, sumNij2OverNi, ssE, ssB float64
	n := len(ms)
	for range n {
		m := &ms[rng.intN(n)]
		N += m.n
		A += m.answers
		sum += m.sum
		sumSq += m.sumSqOverN
		sumNi2 += m.n * m.n
		sumNij2 += m.sumNij2
		sumNij2OverNi += m.sumNij2OverN
		ssE += m.ssWithin
		ssB += m.ssAnswer
	}
	return &sums{N: N, A: A, S: float64(n), sum: sum, sumSq: sumSq, sumNi2: sumNi2, sumNij2: sumNij2,
		sumNij2OverNi: sumNij2OverNi, ssE: ssE, ssB: ssB}
}

// resampleGrouped adds up a resample's moments from its counts of the
// distinct samples' moments.
func resampleGrouped(g grouped[sampleMoments], counts []float64) *sums {
	var a sums
	for k, c := range counts {
		if c == 0 {
			continue
		}
		m := &g.items[k]
		a.N += c * m.n
		a.A += c * m.answers
		a.sum += c * m.sum
		a.sumSq += c * m.sumSqOverN
		a.sumNi2 += c * m.n * m.n
		a.sumNij2 += c * m.sumNij2
		a.sumNij2OverNi += c * m.sumNij2OverN
		a.ssE += c * m.ssWithin
		a.ssB += c * m.ssAnswer
	}
	a.S = float64(g.n)
	return &a
}

// ShareCI holds 95% bootstrap intervals of the three shares.
type ShareCI struct {
	Sample, Agent, Judge [2]float64
}

// DecomposeCI is Decompose with a 95% percentile interval of each share,
// resampling samples with replacement iters times (zero or fewer means
// DefaultIterations); the same seed gives the same intervals.
func DecomposeCI(samples [][][]float64, iters int, seed uint64) (Components, ShareCI) {
	return decomposeCI(moments(samples), iters, seed, true)
}

// DecomposeCIEach is DecomposeCI over n samples whose answers each yields,
// in order, sample i's when called with i: the scores of an answer, which
// are read before yield returns. A caller that keeps its scores otherwise
// than as samples → answers → scores needs not copy them into that shape.
func DecomposeCIEach(n int, each func(i int, yield func(scores []float64)), iters int, seed uint64) (Components, ShareCI) {
	return decomposeCI(momentsEach(n, each), iters, seed, true)
}

// decomposeCI is DecomposeCI from the samples' moments; mayGroup false
// always draws indices.
func decomposeCI(ms []sampleMoments, iters int, seed uint64, mayGroup bool) (Components, ShareCI) {
	c := all(ms).components()
	var ci ShareCI
	n := len(ms)
	if n < 2 {
		s, a, j := c.Shares()
		ci.Sample, ci.Agent, ci.Judge = [2]float64{s, s}, [2]float64{a, a}, [2]float64{j, j}
		return c, ci
	}
	if iters <= 0 {
		iters = DefaultIterations
	}
	rng := newIndexer(seed)
	g, isGrouped := groupItemsBy(ms, sampleMoments.key)
	isGrouped = isGrouped && mayGroup
	counts := make([]float64, len(g.items))
	shares := [3][]float64{make([]float64, iters), make([]float64, iters), make([]float64, iters)}
	for it := range iters {
		var b Components
		if isGrouped {
			g.draw(rng.src, counts)
			b = resampleGrouped(g, counts).components()
		} else {
			b = resample(ms, rng).components()
		}
		shares[0][it], shares[1][it], shares[2][it] = b.Shares()
	}
	interval := func(v []float64) [2]float64 {
		slices.Sort(v)
		return [2]float64{stat.Quantile(0.025, stat.Empirical, v, nil), stat.Quantile(0.975, stat.Empirical, v, nil)}
	}
	ci.Sample, ci.Agent, ci.Judge = interval(shares[0]), interval(shares[1]), interval(shares[2])
	return c, ci
}
