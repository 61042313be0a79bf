package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// By hand: judge means 1, 0, 1, 1; samples 0 and 1 drawn with p = 0.5,
// people's means 0 and 0 (residuals −1 and 0, their weighted mean −0.5).
// z = 1 − 0.5 + (−1 + 0.5)/0.5, 0 − 0.5 + 0.5/0.5, 0.5, 0.5 = −0.5, 0.5,
// 0.5, 0.5: mean 0.25 (the judge's 0.75 plus −0.5), sd 0.5, stderr 0.25,
// t(0.975, 3) = 3.182446.
func TestPPIMeanByHand(t *testing.T) {
	got := PPIMean([]PPIUnit{{Judge: 1, Reviewed: true, Residual: -1, P: 0.5}, {Judge: 0, Reviewed: true, Residual: 0, P: 0.5},
		{Judge: 1}, {Judge: 1}})
	near := func(name string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-5 {
			t.Errorf("%s = %.6f, want %.6f", name, got, want)
		}
	}
	near("mean", got.Mean, 0.25)
	near("stderr", got.Stderr, 0.25)
	near("lo", got.Lo, 0.25-3.182446*0.25)
	near("hi", got.Hi, 0.25+3.182446*0.25)
	if got.Reviewed != 2 || got.Samples != 4 {
		t.Errorf("reviewed %d of %d, want 2 of 4", got.Reviewed, got.Samples)
	}
}

func TestDrawProbabilities(t *testing.T) {
	for _, p := range DrawProbabilities([]float64{1, 1, 1, 1, 1}, 2) {
		if math.Abs(p-0.4) > 1e-12 {
			t.Fatalf("equal weights, 2 of 5: p = %v, want 0.4 each", p)
		}
	}
	// Weights 10, 1, 1, 1, m = 2: the first is drawn surely, the others
	// share the one left: 1/3 each.
	got := DrawProbabilities([]float64{1, 10, 1, 1}, 2)
	want := []float64{1.0 / 3, 1, 1.0 / 3, 1.0 / 3}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Fatalf("weights 1, 10, 1, 1, m = 2: %v, want %v", got, want)
		}
	}
	sum := 0.0
	for _, p := range DrawProbabilities([]float64{0.1, 0.3, 0.2, 0.9, 0.4, 0.05}, 3) {
		sum += p
	}
	if math.Abs(sum-3) > 1e-9 {
		t.Errorf("probabilities sum to %v, want 3", sum)
	}
}

// world is a simulated run: each sample's true mean, the judge's, and how
// uncertain the judge looked (its panel's spread).
type world struct{ truth, judge, spread []float64 }

// draw reviews the first m samples of the order by U/w and returns the
// prediction-powered mean.
func (w world) draw(rng *rand.Rand, weights []float64, m int) PPI {
	n := len(w.truth)
	keys := make([]float64, n)
	order := make([]int, n)
	for i := range keys {
		keys[i], order[i] = rng.Float64()/weights[i], i
	}
	slices.SortFunc(order, func(a, b int) int { return cmpDesc(keys[b], keys[a]) })
	p := DrawProbabilities(weights, m)
	units := make([]PPIUnit, n)
	for i := range units {
		units[i] = PPIUnit{Judge: w.judge[i], P: p[i]}
	}
	for _, i := range order[:m] {
		units[i].Reviewed, units[i].Residual = true, w.truth[i]-w.judge[i]
	}
	return PPIMean(units)
}

// biasedWorld: 1,000 samples of a 1–5 metric, true means N(3, 0.8²), a
// judge 0.5 too high. Its panel agrees on three samples in four (spread
// under 0.1) and splits on the rest (0.3 to 0.6); its errors' spread is
// twice its panel's (errorsFollowSpread) or the same everywhere (0.47, as
// much in all).
func biasedWorld(rng *rand.Rand, errorsFollowSpread bool) world {
	const n = 1000
	w := world{make([]float64, n), make([]float64, n), make([]float64, n)}
	for i := range n {
		w.spread[i] = rng.Float64() * 0.1
		if rng.Float64() < 0.25 {
			w.spread[i] = 0.3 + rng.Float64()*0.3
		}
		w.truth[i] = 3 + 0.8*rng.NormFloat64()
		sd := 0.47
		if errorsFollowSpread {
			sd = 2 * w.spread[i]
		}
		w.judge[i] = w.truth[i] + 0.5 + sd*rng.NormFloat64()
	}
	return w
}

// A judge biased by +0.5 on 1,000 answers, 100 reviewed at random: the
// corrected interval covers the true mean (3) in at least 93% of 1,000
// runs, the judge's own in under 20%.
func TestPPICoversWhereTheJudgeDoesNot(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	uniform := slices.Repeat([]float64{1}, 1000)
	covered, judgeCovered := 0, 0
	const runs = 1000
	for range runs {
		w := biasedWorld(rng, false)
		est := w.draw(rng, uniform, 100)
		if est.Lo <= 3 && 3 <= est.Hi {
			covered++
		}
		groups := make([][]float64, len(w.judge))
		for i, v := range w.judge {
			groups[i] = []float64{v}
		}
		if s := Clustered(groups); s.CILo <= 3 && 3 <= s.CIHi {
			judgeCovered++
		}
	}
	if covered < 930 {
		t.Errorf("the corrected interval covered the truth in %d of %d runs, want ≥ 930", covered, runs)
	}
	if judgeCovered >= 200 {
		t.Errorf("the judge's own interval covered the truth in %d of %d runs, want < 200", judgeCovered, runs)
	}
}

// meanWidth is the mean width, and the coverage of the true mean 3, of
// the intervals of runs simulated worlds reviewed m samples each.
func meanWidth(seed uint64, runs, m int, active, errorsFollowSpread bool) (width float64, covered int) {
	rng := rand.New(rand.NewPCG(seed, 3))
	for range runs {
		w := biasedWorld(rng, errorsFollowSpread)
		weights := slices.Repeat([]float64{1}, len(w.truth))
		if active {
			weights = ReviewWeights(w.spread)
		}
		est := w.draw(rng, weights, m)
		width += est.Hi - est.Lo
		if est.Lo <= 3 && 3 <= est.Hi {
			covered++
		}
	}
	return width / float64(runs), covered
}

// Where the judge's spread predicts its error, reviews drawn in the
// active order reach the width 100 uniform draws give with at least 30%
// fewer reviews (61 in the simulation), their intervals still covering
// the truth; where it predicts nothing, they are at most a little wider
// (5%); where the judge has no spread, the order is the uniform one.
func TestActiveDrawsNarrowFaster(t *testing.T) {
	const runs = 400
	uniform, _ := meanWidth(1, runs, 100, false, true)
	active, covered := meanWidth(1, runs, 70, true, true)
	if active > uniform {
		t.Errorf("70 active draws: width %.3f, wider than 100 uniform ones' %.3f", active, uniform)
	}
	if covered < runs*93/100 {
		t.Errorf("70 active draws covered the truth in %d of %d runs, want ≥ 93%%", covered, runs)
	}
	u0, _ := meanWidth(2, runs, 100, false, false)
	a0, covered0 := meanWidth(2, runs, 100, true, false)
	if a0 > 1.08*u0 {
		t.Errorf("errors unrelated to the spread: active width %.3f against uniform %.3f, want at most 8%% wider", a0, u0)
	}
	if covered0 < runs*93/100 {
		t.Errorf("errors unrelated to the spread: active draws covered the truth in %d of %d runs", covered0, runs)
	}
}

func TestReviewWeightsWithoutSpreadAreEqual(t *testing.T) {
	for _, w := range ReviewWeights([]float64{0, 0, 0}) {
		if w != 1 {
			t.Fatalf("a judge with no spread: weights %v, want 1 each (a uniform order)", ReviewWeights([]float64{0, 0, 0}))
		}
	}
	if w := ReviewWeights([]float64{0, 0.3}); w[1] <= w[0] || w[0] <= 0 {
		t.Errorf("spreads 0 and 0.3: weights %v, want both above 0 and the second larger", w)
	}
}
