package stats

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
)

func TestPairedBootstrapCounts(t *testing.T) {
	a := []float64{5, 4, 3, 2, 2}
	b := []float64{4, 4, 4, 1, 2 + 1e-12}
	got := PairedBootstrap(a, b, 0, 1)
	if got.Wins != 2 || got.Ties != 2 || got.Losses != 1 || got.N != 5 {
		t.Errorf("wins/ties/losses/n = %d/%d/%d/%d, want 2/2/1/5", got.Wins, got.Ties, got.Losses, got.N)
	}
	// diffs 1, 0, -1, 1, ~0 → mean 0.2
	if !near(got.MeanDiff, 0.2) {
		t.Errorf("MeanDiff = %v, want 0.2", got.MeanDiff)
	}
	if got.CILo > got.MeanDiff || got.CIHi < got.MeanDiff {
		t.Errorf("CI [%v, %v] does not contain %v", got.CILo, got.CIHi, got.MeanDiff)
	}
	// A resampled mean cannot leave the range of the differences.
	if got.CILo < -1 || got.CIHi > 1 {
		t.Errorf("CI [%v, %v] outside [-1, 1]", got.CILo, got.CIHi)
	}
}

func TestPairedBootstrapDeterministic(t *testing.T) {
	a, b := draw(30, 0.3, 7)
	first := PairedBootstrap(a, b, 2000, 42)
	again := PairedBootstrap(a, b, 2000, 42)
	if first != again {
		t.Errorf("same seed gave %+v then %+v", first, again)
	}
	other := PairedBootstrap(a, b, 2000, 43)
	if other.MeanDiff != first.MeanDiff {
		t.Errorf("MeanDiff depends on the seed: %v vs %v", other.MeanDiff, first.MeanDiff)
	}
	if other.CILo == first.CILo && other.CIHi == first.CIHi {
		t.Errorf("seeds 42 and 43 gave the same interval %+v", first)
	}
}

func TestPairedBootstrapShrinksWithSamples(t *testing.T) {
	width := func(n int) float64 {
		a, b := draw(n, 0.5, 3)
		p := PairedBootstrap(a, b, 2000, 42)
		if p.CILo > p.MeanDiff || p.CIHi < p.MeanDiff {
			t.Errorf("n=%d: CI [%v, %v] does not contain %v", n, p.CILo, p.CIHi, p.MeanDiff)
		}
		return p.CIHi - p.CILo
	}
	small, large := width(20), width(500)
	// The width falls like 1/sqrt(n): 500/20 = 25 → about 5 times narrower.
	if large > small/3 {
		t.Errorf("width n=20: %v, n=500: %v; want at least 3 times narrower", small, large)
	}
}

func TestPairedBootstrapEdgeCasesAreJSONSafe(t *testing.T) {
	tests := []struct {
		name string
		a, b []float64
		want Paired
	}{
		{"empty", nil, nil, Paired{}},
		{"one pair", []float64{4}, []float64{3}, Paired{MeanDiff: 1, CILo: 1, CIHi: 1, Wins: 1, N: 1}},
		{"all equal", []float64{2, 2, 2}, []float64{2, 2, 2}, Paired{Ties: 3, N: 3}},
		{"unequal lengths use the shorter", []float64{1, 2, 9}, []float64{1, 2}, Paired{Ties: 2, N: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := PairedBootstrap(tt.a, tt.b, 100, 1)
			if got != tt.want {
				t.Errorf("PairedBootstrap = %+v, want %+v", got, tt.want)
			}
			if _, err := json.Marshal(got); err != nil {
				t.Errorf("json: %v", err)
			}
		})
	}
}

// draw returns n paired scores on a 1–5 scale where a is better than b by
// about shift, with a shared per-sample difficulty.
func draw(n int, shift float64, seed uint64) (a, b []float64) {
	rng := rand.New(rand.NewPCG(seed, seed))
	for range n {
		base := 1 + 4*rng.Float64()
		a = append(a, base+shift+rng.NormFloat64()*0.5)
		b = append(b, base+rng.NormFloat64()*0.5)
	}
	return a, b
}
