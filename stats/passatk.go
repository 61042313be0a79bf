package stats

// PassAtK is the unbiased estimator of pass@k from the HumanEval paper
// (Chen et al., 2021): with n attempts at a problem of which c passed, the
// probability that at least one of k attempts drawn without replacement
// passes, 1 − C(n−c, k)/C(n, k), computed as a product so that it never
// forms the large binomials. It needs 1 ≤ k ≤ n.
func PassAtK(n, c, k int) float64 {
	if n-c < k {
		return 1
	}
	p := 1.0
	for i := n - c + 1; i <= n; i++ {
		p *= 1 - float64(k)/float64(i)
	}
	return 1 - p
}

// PassAtKOver estimates pass@k over problems: attempts[i] holds problem i's
// results, each 1 (passed) or 0. Problems with fewer than k attempts are
// left out. The summary is over problems, each one value, with its 95%
// interval clipped to [0, 1].
func PassAtKOver(attempts [][]float64, k int) Summary {
	var per [][]float64
	for _, a := range attempts {
		if len(a) < k || k < 1 {
			continue
		}
		c := 0
		for _, v := range a {
			if v >= 1 {
				c++
			}
		}
		per = append(per, []float64{PassAtK(len(a), c, k)})
	}
	s := Clustered(per)
	s.CILo, s.CIHi = max(s.CILo, 0), min(s.CIHi, 1)
	return s
}

// MaxPassK is the largest k a pass/fail metric's pass@k and pass^k are
// given for, every k up to it.
const MaxPassK = 20

// PassKs are the k a report gives pass@k for, up to the attempts made.
var PassKs = []int{1, 2, 3, 5, 10, 20, 50, 100}
