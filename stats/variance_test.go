package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// synthetic draws scores with known parts: a sample effect of sd sSample,
// an answer effect of sd sAgent and a score's own noise of sd sJudge.
func synthetic(seed uint64, samples, reps, judgeReps int, sSample, sAgent, sJudge float64) [][][]float64 {
	rng := rand.New(rand.NewPCG(seed, 1))
	out := make([][][]float64, samples)
	for i := range out {
		a := rng.NormFloat64() * sSample
		for range reps {
			b := rng.NormFloat64() * sAgent
			var scores []float64
			for range judgeReps {
				scores = append(scores, 3+a+b+rng.NormFloat64()*sJudge)
			}
			out[i] = append(out[i], scores)
		}
	}
	return out
}

// Data drawn with sample σ = 1, agent σ = 0.5 and judge σ = 0.3 give back
// variances near 1, 0.25 and 0.09.
func TestDecomposeFindsKnownParts(t *testing.T) {
	c, ci := DecomposeCI(synthetic(7, 600, 3, 3, 1, 0.5, 0.3), 400, 1)
	for _, tc := range []struct {
		name      string
		got, want float64
		tol       float64
	}{{"sample", c.Sample, 1, 0.15}, {"agent", c.Agent, 0.25, 0.04}, {"judge", c.Judge, 0.09, 0.01}} {
		if math.Abs(tc.got-tc.want) > tc.tol {
			t.Errorf("%s variance %.4f, want %.2f ± %.2f", tc.name, tc.got, tc.want, tc.tol)
		}
	}
	if math.Abs(c.Total-(c.Sample+c.Agent+c.Judge)) > 1e-12 || !c.AgentMeasured || !c.JudgeMeasured || c.Samples != 600 {
		t.Errorf("components %+v", c)
	}
	s, a, j := c.Shares()
	for _, tc := range []struct {
		name  string
		share float64
		ci    [2]float64
	}{{"sample", s, ci.Sample}, {"agent", a, ci.Agent}, {"judge", j, ci.Judge}} {
		if !(tc.ci[0] <= tc.share && tc.share <= tc.ci[1]) || tc.ci[1]-tc.ci[0] > 0.2 {
			t.Errorf("%s share %.3f, CI %v", tc.name, tc.share, tc.ci)
		}
	}
	// Unbalanced: some answers judged once, some samples answered twice.
	data := synthetic(8, 800, 3, 3, 1, 0.5, 0.3)
	for i := range data {
		if i%3 == 0 {
			data[i] = data[i][:2]
		}
		if i%4 == 0 {
			data[i][0] = data[i][0][:1]
		}
	}
	c = Decompose(data)
	if math.Abs(c.Sample-1) > 0.15 || math.Abs(c.Agent-0.25) > 0.05 || math.Abs(c.Judge-0.09) > 0.015 {
		t.Errorf("unbalanced: %+v", c)
	}
}

// A deterministic judge adds nothing; one score per answer measures none.
func TestDecomposeWithoutJudgeNoise(t *testing.T) {
	c := Decompose(synthetic(9, 300, 3, 3, 1, 0.5, 0))
	if c.Judge != 0 || !c.JudgeMeasured {
		t.Errorf("a deterministic judge: %+v", c)
	}
	c = Decompose(synthetic(9, 300, 3, 1, 1, 0.5, 0.3))
	if c.Judge != 0 || c.JudgeMeasured || math.Abs(c.Agent-0.34) > 0.06 {
		t.Errorf("one score per answer: the judge's part is inside the agent's (0.25 + 0.09): %+v", c)
	}
	c = Decompose([][][]float64{{{4}}, {{2}}})
	if c.AgentMeasured || c.JudgeMeasured || c.Sample != 2 || c.Total != 2 {
		t.Errorf("one score per sample: %+v", c)
	}
}

// A balanced layout by hand: two samples, two answers each, two scores each.
// Answer means 1.5, 2.5 | 4.5, 5.5; sample means 2, 5; grand mean 3.5.
// MS_E = (4 × 0.5) / 4 = 0.5; MS_B = 2 × (4 × 0.25) / 2 = 1; MS_A = 4 ×
// (2.25 + 2.25) / 1 = 18. Judge 0.5, agent (1 − 0.5)/2 = 0.25, sample
// (18 − 1)/4 = 4.25.
func TestDecomposeByHand(t *testing.T) {
	c := Decompose([][][]float64{{{1, 2}, {2, 3}}, {{4, 5}, {5, 6}}})
	if math.Abs(c.Judge-0.5) > 1e-12 || math.Abs(c.Agent-0.25) > 1e-12 || math.Abs(c.Sample-4.25) > 1e-12 {
		t.Errorf("got %+v", c)
	}
}

// A balanced layout by hand whose agent part comes out below 0: two
// samples, two answers each, two scores each, the answers of a sample alike
// and the scores of an answer apart. Answer means 2, 2 | 5, 5; MS_E =
// (4 × 2) / 4 = 2; MS_B = 0; MS_A = 4 × (2.25 + 2.25) / 1 = 18. The agent
// part solves to (0 − 2)/2 = −1, given as 0; the sample part is the
// standard (MS_A − MS_B)/(b·n) = 18/4 = 4.5, not (18 − 2 − 2 × 0)/4 = 4 as
// with the clamped agent part in its place.
func TestDecomposeWithANegativeAgentPart(t *testing.T) {
	c := Decompose([][][]float64{{{1, 3}, {1, 3}}, {{4, 6}, {4, 6}}})
	if math.Abs(c.Judge-2) > 1e-12 || c.Agent != 0 || math.Abs(c.Sample-4.5) > 1e-12 {
		t.Errorf("got %+v, want judge 2, agent 0, sample 4.5", c)
	}
	if !c.AgentClamped || math.Abs(c.AgentSolved+1) > 1e-12 || c.SampleClamped {
		t.Errorf("the agent part should be said clamped from −1: %+v", c)
	}
	if math.Abs(c.Total-6.5) > 1e-12 {
		t.Errorf("total %v, want 6.5", c.Total)
	}
}

// The sample sizes G*Power 3.1 gives for "t tests – Means: difference
// between two dependent means (matched pairs)", a priori, two tails,
// α = 0.05, power 0.80 (Faul, Erdfelder, Lang & Buchner, Behavior Research
// Methods 39, 2007): dz = 0.2 → 199, dz = 0.5 → 34, dz = 0.8 → 15.
func TestSamplesNeededMatchesGPower(t *testing.T) {
	for _, tc := range []struct {
		dz   float64
		want int
	}{{0.2, 199}, {0.5, 34}, {0.8, 15}} {
		if got := SamplesNeeded(1, tc.dz, Alpha, Power); got != tc.want {
			t.Errorf("dz %.1f: %d pairs, want %d", tc.dz, got, tc.want)
		}
		n := tc.want
		if mdd := MinDetectable(1, n, Alpha, Power); mdd > tc.dz || MinDetectable(1, n-1, Alpha, Power) <= tc.dz {
			t.Errorf("dz %.1f: the detectable difference at %d pairs is %.4f", tc.dz, n, mdd)
		}
	}
	if SamplesNeeded(0, 0.5, Alpha, Power) != 0 || MinDetectable(1, 1, Alpha, Power) != 0 {
		t.Error("undefined cases should be 0")
	}
}

// At the detectable difference the test's power is 80% however few the
// pairs: checked by simulating 200,000 paired t-tests of n normal
// differences with that mean (the power estimate's standard error is
// 0.0009). The usual formula, 5% too small at n = 3, gives a power near
// 0.77 there.
func TestMinDetectableHasItsPowerAtFewPairs(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{3, 5, 8} {
		mdd := MinDetectable(1, n, Alpha, Power)
		crit := TQuantile(1-Alpha/2, n-1)
		const trials = 200_000
		hits := 0
		diffs := make([]float64, n)
		for range trials {
			for i := range diffs {
				diffs[i] = mdd + rng.NormFloat64()
			}
			mean, sd := Describe(diffs)
			if math.Abs(mean/(sd/math.Sqrt(float64(n)))) > crit {
				hits++
			}
		}
		if power := float64(hits) / trials; math.Abs(power-Power) > 0.004 {
			t.Errorf("n = %d: power %.4f at the detectable difference %.4f, want 0.80", n, power, mdd)
		}
	}
}

// Holm's procedure by hand: p = (0.01, 0.04, 0.03, 0.005), m = 4. Sorted:
// 0.005 × 4 = 0.02; 0.01 × 3 = 0.03; 0.03 × 2 = 0.06; 0.04 × 1 = 0.04,
// raised to 0.06 to keep the order.
func TestHolm(t *testing.T) {
	got := Holm([]float64{0.01, 0.04, 0.03, 0.005})
	want := []float64{0.03, 0.06, 0.06, 0.02}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Fatalf("Holm = %v, want %v", got, want)
		}
	}
	if got := Holm([]float64{0.5, 0.6}); got[0] != 1 || got[1] != 1 {
		t.Errorf("capped at 1: %v", got)
	}
}

// The paired t-test's p-value against a textbook value: differences
// 1, 2, 3, 4, 5 have mean 3, sd √2.5, t = 3/(√2.5/√5) = 4.2426 on 4 degrees
// of freedom: two-sided p = 0.01324.
func TestPairedP(t *testing.T) {
	if p := PairedP([]float64{1, 2, 3, 4, 5}); math.Abs(p-0.01324) > 5e-5 {
		t.Errorf("p = %.5f", p)
	}
	if PairedP([]float64{0, 0, 0}) != 1 || PairedP([]float64{1, 1}) != 0 {
		t.Error("constant differences")
	}
}

// DecomposeCIEach, fed the answers one at a time, gives DecomposeCI's
// parts and intervals to the bit, with answers of uneven sizes, empty
// answers and empty samples among them.
func TestDecomposeCIEachIsDecomposeCI(t *testing.T) {
	samples := synthetic(7, 300, 3, 2, 1, 0.5, 0.3)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range samples {
		for j := range samples[i] {
			samples[i][j] = samples[i][j][:rng.IntN(3)] // 0, 1 or 2 scores
		}
	}
	samples[5], samples[17] = nil, [][]float64{{}, {}}
	for _, data := range [][][][]float64{samples, synthetic(9, 400, 3, 1, 1, 0.5, 0)} {
		c1, ci1 := DecomposeCI(data, 300, 11)
		c2, ci2 := DecomposeCIEach(len(data), func(i int, yield func([]float64)) {
			for _, scores := range data[i] {
				yield(scores)
			}
		}, 300, 11)
		if c1 != c2 || ci1 != ci2 {
			t.Errorf("DecomposeCIEach %+v %+v, DecomposeCI %+v %+v", c2, ci2, c1, ci1)
		}
		if c1.Total <= 0 || ci1.Sample[0] >= ci1.Sample[1] {
			t.Errorf("a decomposition with nothing in it: %+v %+v", c1, ci1)
		}
	}
}
