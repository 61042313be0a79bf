package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Resampling counts of distinct items draws from the same distribution as
// resampling indices: on 6,000 scores of a 1–5 scale, the two bootstraps'
// intervals agree to within their Monte Carlo error (a tenth of the width).
func TestGroupedBootstrapMatchesIndexedOne(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	values := make([]float64, 6000)
	for i := range values {
		values[i] = float64(rng.IntN(9)-4) / 3 // paired differences of means over 3 repetitions
	}
	if _, ok := groupItems(values); !ok {
		t.Fatal("6,000 values of 9 kinds were not grouped")
	}
	grouped, indexed := bootstrapMeans(values, 2000, 1), indexedMeans(values, 2000, 1)
	width := indexed[1949] - indexed[50]
	for _, q := range []int{50, 1000, 1949} {
		if d := math.Abs(grouped[q] - indexed[q]); d > width/10 {
			t.Errorf("quantile %d/2000: grouped %.4f, indexed %.4f (width %.4f)", q, grouped[q], indexed[q], width)
		}
	}

	samples := make([][][]float64, 5000)
	for i := range samples {
		base := float64(1 + rng.IntN(5))
		for range 3 {
			answer := min(5, max(1, base+float64(rng.IntN(3)-1)))
			samples[i] = append(samples[i], []float64{answer, min(5, answer+float64(rng.IntN(2)))})
		}
	}
	c1, g := decomposeCI(moments(samples), 500, 1, true)
	c2, x := decomposeCI(moments(samples), 500, 1, false)
	if c1 != c2 {
		t.Fatalf("the components differ: %+v and %+v", c1, c2)
	}
	for name, pair := range map[string][2][2]float64{"sample": {g.Sample, x.Sample}, "agent": {g.Agent, x.Agent}, "judge": {g.Judge, x.Judge}} {
		width := pair[1][1] - pair[1][0]
		if math.Abs(pair[0][0]-pair[1][0]) > width/5 || math.Abs(pair[0][1]-pair[1][1]) > width/5 {
			t.Errorf("%s share interval: grouped %v, indexed %v", name, pair[0], pair[1])
		}
	}
}

// Small samples, and samples of mostly distinct values, draw indices: their
// intervals are the ones they always were.
func TestSmallOrVariedSamplesAreNotGrouped(t *testing.T) {
	if _, ok := groupItems(make([]float64, groupedFrom-1)); ok {
		t.Error("a sample below groupedFrom was grouped")
	}
	varied := make([]float64, 4000)
	for i := range varied {
		varied[i] = float64(i) / 7
	}
	if _, ok := groupItems(varied); ok {
		t.Error("4,000 distinct values were grouped")
	}
}

// Moments are grouped by their bits as they would be by ==: −0 and +0
// together, values apart however close.
func TestMomentsKeyGroupsAsEquality(t *testing.T) {
	var ms []sampleMoments
	for i := range 3000 {
		m := sampleMoments{n: 3, answers: 3, sum: float64(i % 5), ssWithin: 0.5}
		switch i % 7 {
		case 0:
			m.ssAnswer = math.Copysign(0, -1)
		case 1:
			m.sum = math.Nextafter(m.sum, 10)
		}
		ms = append(ms, m)
	}
	byKey, ok1 := groupItemsBy(ms, sampleMoments.key)
	byValue, ok2 := groupItems(ms)
	if !ok1 || !ok2 || len(byKey.items) != len(byValue.items) || len(byKey.items) != 10 {
		t.Fatalf("grouped by key into %d (%v), by value into %d (%v); want 10 each", len(byKey.items), ok1, len(byValue.items), ok2)
	}
	for i := range byKey.items {
		if byKey.items[i] != byValue.items[i] || byKey.counts[i] != byValue.counts[i] {
			t.Errorf("group %d: %+v × %v by key, %+v × %v by value", i, byKey.items[i], byKey.counts[i], byValue.items[i], byValue.counts[i])
		}
	}
}
