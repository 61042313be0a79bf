package stats

import (
	"math/rand/v2"
	"testing"
)

// The indexer must draw what rand.Rand.IntN draws from the same PCG: every
// bootstrap's intervals, and every summary, depend on the sequence.
func TestIndexerDrawsAsIntN(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7, 64, 1000, 10007, 1 << 20, 1<<62 + 1} {
		want := rand.New(rand.NewPCG(42, pcgStream))
		got := newIndexer(42)
		for i := range 10000 {
			if g, w := got.intN(n), want.IntN(n); g != w {
				t.Fatalf("n=%d draw %d: got %d, IntN gives %d", n, i, g, w)
			}
		}
	}
}
