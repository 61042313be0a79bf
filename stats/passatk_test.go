package stats

import (
	"math"
	"testing"
)

// Against values computed by hand from 1 − C(n−c, k)/C(n, k).
func TestPassAtK(t *testing.T) {
	for _, tc := range []struct {
		n, c, k int
		want    float64
	}{
		{5, 2, 1, 0.4},    // c/n
		{5, 2, 2, 0.7},    // 1 − C(3,2)/C(5,2) = 1 − 3/10
		{5, 2, 3, 0.9},    // 1 − C(3,3)/C(5,3) = 1 − 1/10
		{5, 2, 4, 1},      // fewer failures than draws
		{10, 0, 5, 0},     // never passed
		{10, 1, 5, 0.5},   // 1 − C(9,5)/C(10,5) = 1 − 126/252
		{200, 13, 100, 0}, // computed below
	} {
		if tc.n == 200 {
			// 1 − C(187,100)/C(200,100) = 1 − Π_{i=188}^{200} (1 − 100/i)
			want := 1.0
			for i := 188; i <= 200; i++ {
				want *= 1 - 100/float64(i)
			}
			tc.want = 1 - want
		}
		if got := PassAtK(tc.n, tc.c, tc.k); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("PassAtK(%d, %d, %d) = %v, want %v", tc.n, tc.c, tc.k, got, tc.want)
		}
	}
}

func TestPassAtKOverProblems(t *testing.T) {
	// Three problems, three attempts each: 1/3, 3/3 and 0/3 passed.
	attempts := [][]float64{{1, 0, 0}, {1, 1, 1}, {0, 0, 0}, {1}}
	s1 := PassAtKOver(attempts, 1)
	if s1.Samples != 4 || math.Abs(s1.Mean-(1.0/3+1+0+1)/4) > 1e-12 {
		t.Errorf("pass@1 over 4 problems: %+v", s1)
	}
	// pass@2 leaves out the problem with one attempt: (1 − C(2,2)/C(3,2), 1, 0) = (2/3, 1, 0).
	s2 := PassAtKOver(attempts, 2)
	if s2.Samples != 3 || math.Abs(s2.Mean-(2.0/3+1)/3) > 1e-12 || s2.CILo < 0 || s2.CIHi > 1 {
		t.Errorf("pass@2: %+v", s2)
	}
}
