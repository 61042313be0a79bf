package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"gonum.org/v1/gonum/stat"
)

// category is the index of the category nearest v.
func category(v float64, cats []float64) int {
	best := 0
	for i, c := range cats {
		if math.Abs(v-c) < math.Abs(v-cats[best]) {
			best = i
		}
	}
	return best
}

// Confusion counts the pairs (a[i], b[i]) by category: rows are a's
// category, columns b's. Values are put in the nearest of cats.
func Confusion(a, b, cats []float64) [][]int {
	m := make([][]int, len(cats))
	for i := range m {
		m[i] = make([]int, len(cats))
	}
	for i := range min(len(a), len(b)) {
		m[category(a[i], cats)][category(b[i], cats)]++
	}
	return m
}

// WeightedKappa is Cohen's kappa between raters a and b with quadratic
// weights over the ordered categories cats: 1 − Σ w·O / Σ w·E, where O
// is the observed share of each pair of categories, E the share expected
// from the two raters' marginals, and w = (i − j)² / (k − 1)². It is NaN
// when it is undefined: no pairs, fewer than two categories, or both raters
// always giving the same single category.
func WeightedKappa(a, b, cats []float64) float64 {
	return kappaOf(Confusion(a, b, cats))
}

func kappaOf(m [][]int) float64 {
	k := len(m)
	if k < 2 {
		return math.NaN()
	}
	rows, cols := make([]float64, k), make([]float64, k)
	var n float64
	for i := range m {
		for j := range m[i] {
			c := float64(m[i][j])
			rows[i] += c
			cols[j] += c
			n += c
		}
	}
	if n == 0 {
		return math.NaN()
	}
	var obs, exp float64
	for i := range m {
		for j := range m[i] {
			w := float64((i-j)*(i-j)) / float64((k-1)*(k-1))
			obs += w * float64(m[i][j]) / n
			exp += w * rows[i] * cols[j] / (n * n)
		}
	}
	if exp == 0 {
		return math.NaN()
	}
	return 1 - obs/exp
}

// KappaCI is the 95% percentile interval of WeightedKappa over iters
// bootstrap resamples of the pairs (DefaultIterations when 0 or fewer),
// seeded so that the same pairs give the same interval. Resamples whose
// kappa is undefined are left out; NaN, NaN when all are. Many pairs
// (groupedFrom or more) are resampled as counts of each cell of the
// confusion matrix (grouped.go): 34,000 verdicts drew 68 million indices.
func KappaCI(a, b, cats []float64, iters int, seed uint64) (lo, hi float64) {
	n := min(len(a), len(b))
	if n == 0 {
		return math.NaN(), math.NaN()
	}
	if iters <= 0 {
		iters = DefaultIterations
	}
	idx := make([]int, n)
	for i := range n {
		idx[i] = category(a[i], cats)*len(cats) + category(b[i], cats)
	}
	m := make([][]int, len(cats))
	for i := range m {
		m[i] = make([]int, len(cats))
	}
	rng := newIndexer(seed)
	resample := func() {
		for range n {
			p := idx[rng.intN(n)]
			m[p/len(cats)][p%len(cats)]++
		}
	}
	if g, ok := groupItems(idx); ok {
		src := rand.NewPCG(seed, pcgStream)
		counts := make([]float64, len(g.items))
		resample = func() {
			g.draw(src, counts)
			for k, c := range counts {
				p := g.items[k]
				m[p/len(cats)][p%len(cats)] += int(c)
			}
		}
	}
	kappas := make([]float64, 0, iters)
	for range iters {
		for i := range m {
			clear(m[i])
		}
		resample()
		if k := kappaOf(m); !math.IsNaN(k) {
			kappas = append(kappas, k)
		}
	}
	if len(kappas) == 0 {
		return math.NaN(), math.NaN()
	}
	sort.Float64s(kappas)
	return stat.Quantile(0.025, stat.Empirical, kappas, nil), stat.Quantile(0.975, stat.Empirical, kappas, nil)
}

// AlphaMetric is how Krippendorff's alpha weighs a disagreement between two values.
type AlphaMetric int

// The metrics of alpha.
const (
	Nominal  AlphaMetric = iota // any two different values disagree equally
	Ordinal                     // by how many values' worth of ranks lie between them
	Interval                    // by their squared difference
)

// fewValues is how many values alphaValues keeps in order as it meets them:
// a judge's scores are a few values met over and over (a report of 30,000
// answers scored three times sorted 90,000 values per metric to find five).
const fewValues = 64

// alphaValues lists the values of the units of two values or more, in
// order, each once.
func alphaValues(units [][]float64) []float64 {
	var values []float64
	for _, u := range units {
		if len(u) < 2 {
			continue
		}
		for _, v := range u {
			i, found := slices.BinarySearch(values, v)
			if found {
				continue
			}
			if len(values) == fewValues || math.IsNaN(v) {
				return sortedValues(units)
			}
			values = slices.Insert(values, i, v)
		}
	}
	return values
}

// sortedValues is alphaValues by sorting every value.
func sortedValues(units [][]float64) []float64 {
	var values []float64
	for _, u := range units {
		if len(u) >= 2 {
			values = append(values, u...)
		}
	}
	slices.Sort(values)
	return slices.Compact(values)
}

// KrippendorffAlpha is the agreement of several raters: units[u] holds the
// values the raters gave unit u (missing ones left out). Units with fewer
// than two values cannot be paired and are left out. It is 1 − (n − 1) ·
// Σ o_ck δ²_ck / Σ n_c n_k δ²_ck over the coincidence matrix o of the
// values, with n_c the values of each kind and n their number
// (Krippendorff, "Computing Krippendorff's Alpha-Reliability", 2011). NaN
// when undefined: fewer than two pairable values, or a single kind.
func KrippendorffAlpha(units [][]float64, metric AlphaMetric) float64 {
	values := alphaValues(units)
	k := len(values)
	if k < 2 {
		return math.NaN()
	}
	o := coincidences(units, values)
	nc := make([]float64, k)
	var n float64
	for c := range o {
		for _, x := range o[c] {
			nc[c] += x
		}
		n += nc[c]
	}
	delta := alphaDistance(metric, values, nc)
	var do, de float64
	for c := range k {
		for d := range k {
			dd := delta(c, d)
			do += o[c][d] * dd
			de += nc[c] * nc[d] * dd
		}
	}
	if de == 0 {
		return math.NaN()
	}
	return 1 - (n-1)*do/de
}

// coincidences is alpha's coincidence matrix over values: each pair of a
// unit's values, weighted by 1/(m − 1) for a unit of m values; units of
// one value are left out.
func coincidences(units [][]float64, values []float64) [][]float64 {
	k := len(values)
	o := make([][]float64, k)
	for i := range o {
		o[i] = make([]float64, k)
	}
	var at []int // the places of a unit's values in values
	for _, u := range units {
		m := len(u)
		if m < 2 {
			continue
		}
		at = at[:0]
		for _, v := range u {
			i, _ := slices.BinarySearch(values, v)
			at = append(at, i)
		}
		w := 1 / float64(m-1)
		for i := range at {
			for j := range at {
				if i != j {
					o[at[i]][at[j]] += w
				}
			}
		}
	}
	return o
}

// alphaDistance is the squared distance of two values (by their place in
// values) under metric; the ordinal one counts the values between them by
// their marginals nc.
func alphaDistance(metric AlphaMetric, values, nc []float64) func(c, d int) float64 {
	return func(c, d int) float64 {
		switch metric {
		case Nominal:
			if c == d {
				return 0
			}
			return 1
		case Interval:
			return (values[c] - values[d]) * (values[c] - values[d])
		}
		lo, hi := min(c, d), max(c, d)
		var s float64
		for g := lo; g <= hi; g++ {
			s += nc[g]
		}
		s -= (nc[lo] + nc[hi]) / 2
		return s * s
	}
}
