package stats

import "math"

// Wilson is the 95% Wilson score interval of a proportion, k successes in
// n trials: unlike p ± 1.96·se it stays within [0, 1] and is not a point
// when k is 0 or n. With no trials it is [0, 1].
func Wilson(k, n int) (lo, hi float64) {
	if n <= 0 {
		return 0, 1
	}
	const z = 1.959963984540054
	p, nf := float64(k)/float64(n), float64(n)
	centre := (p + z*z/(2*nf)) / (1 + z*z/nf)
	half := z / (1 + z*z/nf) * math.Sqrt(p*(1-p)/nf+z*z/(4*nf*nf))
	return max(0, centre-half), min(1, centre+half)
}
