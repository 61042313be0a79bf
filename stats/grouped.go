package stats

import (
	"math/rand/v2"

	"gonum.org/v1/gonum/stat/distuv"
)

// A bootstrap resample of n items drawn with replacement is, in
// distribution, a multinomial count of each distinct item: when the items
// take few distinct values (scores on a 1–5 scale, their means over a few
// repetitions), drawing K counts, each a binomial of what is left, costs
// O(K) per resample instead of O(n). Large samples (groupedFrom items or
// more, at most a quarter of them distinct) are resampled so; smaller ones
// draw their n indices as before, to the same intervals as ever.

// groupedFrom is the number of items from which a bootstrap groups them.
const groupedFrom = 2000

// grouped are the distinct items of a sample and how many times each occurs.
type grouped[T comparable] struct {
	items  []T
	counts []float64
	n      int
}

// groupItems groups items by value; ok is false when the bootstrap should
// draw indices instead (too few items, or too many distinct).
func groupItems[T comparable](items []T) (g grouped[T], ok bool) {
	return groupItemsBy(items, func(v T) T { return v })
}

// groupItemsBy is groupItems with items equal when their keys are.
func groupItemsBy[T, K comparable](items []T, key func(T) K) (g grouped[T], ok bool) {
	if len(items) < groupedFrom {
		return g, false
	}
	at := map[K]int{}
	for _, v := range items {
		k, seen := at[key(v)]
		if !seen {
			if len(g.items) >= len(items)/4 {
				return g, false
			}
			k = len(g.items)
			at[key(v)] = k
			g.items = append(g.items, v)
			g.counts = append(g.counts, 0)
		}
		g.counts[k]++
	}
	g.n = len(items)
	return g, true
}

// draw fills out with one resample's count of each distinct item.
func (g *grouped[T]) draw(src *rand.PCG, out []float64) {
	left, rest := float64(g.n), float64(g.n)
	for k, w := range g.counts {
		switch {
		case left == 0:
			out[k] = 0
		case k == len(g.counts)-1:
			out[k] = left
		default:
			c := distuv.Binomial{N: left, P: min(w/rest, 1), Src: src}.Rand()
			out[k] = c
			left -= c
		}
		rest -= w
	}
}
