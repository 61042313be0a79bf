package stats

import (
	"math/bits"
	"math/rand/v2"
)

// indexer draws indices in [0, n) as rand.Rand's IntN does on a PCG
// source, to the same sequence, but calls the PCG straight instead of
// through the Source interface: bootstraps draw tens of millions of them.
type indexer struct{ src *rand.PCG }

func newIndexer(seed uint64) indexer { return indexer{rand.NewPCG(seed, pcgStream)} }

// intN is rand.Rand.IntN (Lemire's multiply and reject), for n > 0.
func (x indexer) intN(n int) int {
	u := uint64(n)
	if u&(u-1) == 0 {
		return int(x.src.Uint64() & (u - 1))
	}
	hi, lo := bits.Mul64(x.src.Uint64(), u)
	if lo < u {
		thresh := -u % u
		for lo < thresh {
			hi, lo = bits.Mul64(x.src.Uint64(), u)
		}
	}
	return int(hi)
}
