package stats

import (
	"math"
	"slices"
)

// PassHatK is τ-bench's pass^k for one problem (Yao et al., 2024): with n
// attempts of which c passed, the chance that k attempts drawn without
// replacement all pass, C(c, k)/C(n, k), computed as a product. pass^1 is
// pass@1; pass^k falls with k as an agent fails now and then. It needs
// 1 ≤ k ≤ n.
func PassHatK(n, c, k int) float64 {
	if c < k {
		return 0
	}
	p := 1.0
	for i := range k {
		p *= float64(c-i) / float64(n-i)
	}
	return p
}

// PassHatKOver estimates pass^k over problems, as PassAtKOver does pass@k.
func PassHatKOver(attempts [][]float64, k int) Summary {
	var per [][]float64
	for _, a := range attempts {
		if len(a) < k || k < 1 {
			continue
		}
		per = append(per, []float64{PassHatK(len(a), passes(a), k)})
	}
	s := Clustered(per)
	s.CILo, s.CIHi = max(s.CILo, 0), min(s.CIHi, 1)
	return s
}

func passes(a []float64) int {
	c := 0
	for _, v := range a {
		if v >= 1 {
			c++
		}
	}
	return c
}

// FleissKappa is Fleiss' κ (1971) of subjects each rated by the same number
// of raters into categories: here samples, their repetitions, and the
// values they scored. Subjects rated another number of times than the
// most common are left out. ok is false when κ is undefined: fewer than
// two subjects or raters, or every rating in one category (chance
// agreement 1).
func FleissKappa(ratings [][]float64) (kappa float64, ok bool) {
	n, most := commonRaters(ratings)
	if n < 2 || most < 2 {
		return 0, false
	}
	var cats []float64
	for _, r := range ratings {
		for _, v := range r {
			if !slices.Contains(cats, v) {
				cats = append(cats, v)
			}
		}
	}
	totals := make([]float64, len(cats))
	var pBar float64
	subjects := 0
	for _, r := range ratings {
		if len(r) != n {
			continue
		}
		subjects++
		pBar += subjectAgreement(r, cats, totals)
	}
	pBar /= float64(subjects)
	pe := 0.0
	for _, t := range totals {
		p := t / float64(subjects*n)
		pe += p * p
	}
	if math.Abs(1-pe) < 1e-12 {
		return 0, false
	}
	return (pBar - pe) / (1 - pe), true
}

// commonRaters is the most common number of ratings a subject has (the
// larger on a tie), and how many subjects have it.
func commonRaters(ratings [][]float64) (n, most int) {
	counts := map[int]int{}
	for _, r := range ratings {
		counts[len(r)]++
	}
	for size, k := range counts {
		if k > most || k == most && size > n {
			n, most = size, k
		}
	}
	return n, most
}

// subjectAgreement is the share of the subject's pairs of ratings that
// agree; it adds the subject's ratings in each category to totals.
func subjectAgreement(r, cats, totals []float64) float64 {
	n := len(r)
	agree := 0.0
	for j, c := range cats {
		nij := 0.0
		for _, v := range r {
			if v == c {
				nij++
			}
		}
		totals[j] += nij
		agree += nij * nij
	}
	return (agree - float64(n)) / float64(n*(n-1))
}
