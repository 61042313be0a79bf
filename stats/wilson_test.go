package stats

import (
	"math"
	"testing"
)

// Published values: 8 of 10 gives [0.4902, 0.9433] (Newcombe 1998, and
// statsmodels' proportion_confint(8, 10, method="wilson")); 0 of 10
// [0, 0.2775]; 10 of 10 [0.7225, 1].
func TestWilsonMatchesPublishedIntervals(t *testing.T) {
	for _, c := range []struct {
		k, n   int
		lo, hi float64
	}{{8, 10, 0.4902, 0.9433}, {0, 10, 0, 0.2775}, {10, 10, 0.7225, 1}} {
		lo, hi := Wilson(c.k, c.n)
		if math.Abs(lo-c.lo) > 5e-5 || math.Abs(hi-c.hi) > 5e-5 {
			t.Errorf("Wilson(%d, %d) = [%.4f, %.4f], want [%.4f, %.4f]", c.k, c.n, lo, hi, c.lo, c.hi)
		}
	}
}
