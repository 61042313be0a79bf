package stats

import (
	"math"
	"testing"
)

func TestPassHatK(t *testing.T) {
	// By hand: 3 of 5 passed. pass^2 = C(3,2)/C(5,2) = 3/10; pass^3 =
	// 1/10; pass^4 = 0; pass^1 = 3/5 = pass@1.
	for _, tc := range []struct {
		n, c, k int
		want    float64
	}{{5, 3, 1, 0.6}, {5, 3, 2, 0.3}, {5, 3, 3, 0.1}, {5, 3, 4, 0}, {4, 4, 4, 1}, {4, 0, 1, 0}} {
		if got := PassHatK(tc.n, tc.c, tc.k); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("pass^%d of %d/%d = %v, want %v", tc.k, tc.c, tc.n, got, tc.want)
		}
	}
	for n := 1; n <= 6; n++ {
		for c := 0; c <= n; c++ {
			if a, b := PassHatK(n, c, 1), PassAtK(n, c, 1); math.Abs(a-b) > 1e-12 {
				t.Errorf("pass^1 %v ≠ pass@1 %v at %d/%d", a, b, c, n)
			}
		}
	}
	// Over problems: (3/10 + 1 + 0) / 3.
	s := PassHatKOver([][]float64{{1, 0, 1, 1, 0}, {1, 1, 1, 1, 1}, {0, 0, 0, 0, 0}}, 2)
	if math.Abs(s.Mean-1.3/3) > 1e-12 || s.Samples != 3 {
		t.Errorf("pass^2 over problems = %+v, want 0.4333 of 3", s)
	}
}

func TestFleissKappa(t *testing.T) {
	// Fleiss' (1971) worked example as Wikipedia gives it: 10 subjects, 14
	// raters, 5 categories; κ = 0.210.
	table := [][5]int{{0, 0, 0, 0, 14}, {0, 2, 6, 4, 2}, {0, 0, 3, 5, 6}, {0, 3, 9, 2, 0}, {2, 2, 8, 1, 1},
		{7, 7, 0, 0, 0}, {3, 2, 6, 3, 0}, {2, 5, 3, 2, 2}, {6, 5, 2, 1, 0}, {0, 2, 2, 3, 7}}
	var ratings [][]float64
	for _, row := range table {
		var r []float64
		for cat, n := range row {
			for range n {
				r = append(r, float64(cat+1))
			}
		}
		ratings = append(ratings, r)
	}
	if k, ok := FleissKappa(ratings); !ok || math.Abs(k-0.20993) > 5e-5 {
		t.Errorf("κ = %v (%v), want 0.210", k, ok)
	}
	// Pass/fail by hand: 4 samples × 3 repetitions, passes 3, 0, 2, 1.
	// P_i = 1, 1, 1/3, 1/3 → P̄ = 2/3; p(pass) = 6/12 → Pe = 1/2; κ = 1/3.
	pf := [][]float64{{1, 1, 1}, {0, 0, 0}, {1, 1, 0}, {0, 0, 1}}
	if k, ok := FleissKappa(pf); !ok || math.Abs(k-1.0/3) > 1e-12 {
		t.Errorf("pass/fail κ = %v (%v), want 1/3", k, ok)
	}
	// A sample with fewer repetitions is left out; every rating alike: none.
	if k, ok := FleissKappa(append(pf, []float64{1})); !ok || math.Abs(k-1.0/3) > 1e-12 {
		t.Errorf("with a short sample, κ = %v", k)
	}
	if _, ok := FleissKappa([][]float64{{1, 1}, {1, 1}}); ok {
		t.Error("κ of unanimous ratings in one category is undefined")
	}
}
