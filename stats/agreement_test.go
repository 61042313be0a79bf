package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// Krippendorff's own example ("Computing Krippendorff's Alpha-Reliability",
// 2011): four coders, twelve units, missing values; published alpha
// nominal .743, ordinal .815, interval .849.
func TestKrippendorffAlphaPublishedExample(t *testing.T) {
	units := [][]float64{
		{1, 1, 1}, {2, 2, 3, 2}, {3, 3, 3, 3}, {3, 3, 3, 3}, {2, 2, 2, 2}, {1, 2, 3, 4},
		{4, 4, 4, 4}, {1, 1, 2, 1}, {2, 2, 2, 2}, {5, 5, 5}, {1, 1}, {3},
	}
	for _, tc := range []struct {
		metric AlphaMetric
		want   float64
	}{{Nominal, 0.743}, {Ordinal, 0.815}, {Interval, 0.849}} {
		if got := KrippendorffAlpha(units, tc.metric); math.Abs(got-tc.want) > 0.0005 {
			t.Errorf("metric %d: alpha %.4f, want %.3f", tc.metric, got, tc.want)
		}
	}
	if a := KrippendorffAlpha([][]float64{{3, 3}, {3, 3}}, Ordinal); !math.IsNaN(a) {
		t.Errorf("one kind of value: %v, want NaN", a)
	}
	if a := KrippendorffAlpha([][]float64{{1, 1}, {2, 2}, {3, 3}}, Ordinal); a != 1 {
		t.Errorf("perfect agreement: %v", a)
	}
}

// TestWeightedKappaByHand checks kappa on pairs worked out by hand.
//
// Categories 1, 2, 3 (weights 0, 1/4, 1 for distances 0, 1, 2). Pairs
// (judge, human): (1,1) (2,2) (3,3) (3,2) (1,2) (2,2):
//
//	O = [[1,1,0],[0,2,0],[0,1,1]]/6; rows 2,2,2; cols 1,4,1.
//	Σ w·O = (1/4·1 + 1/4·1)/6 = 1/12.
//	E_ij = row_i·col_j/36: Σ w·E = [2·4·¼ + 2·1·1 + 2·1·¼ + 2·1·¼ + 2·1·1 + 2·4·¼]/36 = 9/36 = 1/4.
//	kappa = 1 − (1/12)/(1/4) = 2/3.
func TestWeightedKappaByHand(t *testing.T) {
	judge := []float64{1, 2, 3, 3, 1, 2}
	human := []float64{1, 2, 3, 2, 2, 2}
	cats := []float64{1, 2, 3}
	if k := WeightedKappa(judge, human, cats); math.Abs(k-2.0/3) > 1e-12 {
		t.Errorf("kappa %v, want 2/3", k)
	}
	want := [][]int{{1, 1, 0}, {0, 2, 0}, {0, 1, 1}}
	got := Confusion(judge, human, cats)
	for i := range want {
		for j := range want[i] {
			if got[i][j] != want[i][j] {
				t.Fatalf("confusion %v, want %v", got, want)
			}
		}
	}
	if k := WeightedKappa([]float64{1, 2, 3}, []float64{1, 2, 3}, cats); k != 1 {
		t.Errorf("perfect agreement: %v", k)
	}
	if k := WeightedKappa([]float64{2, 2}, []float64{2, 2}, cats); !math.IsNaN(k) {
		t.Errorf("one category only: %v, want NaN", k)
	}
	// Values between categories count as the nearest one.
	if k := WeightedKappa([]float64{1.1, 2, 2.9, 3, 1, 2.2}, human, cats); math.Abs(k-2.0/3) > 1e-12 {
		t.Errorf("rounded kappa %v", k)
	}
	lo, hi := KappaCI(judge, human, cats, 2000, 1)
	lo2, hi2 := KappaCI(judge, human, cats, 2000, 1)
	if lo != lo2 || hi != hi2 || lo > 2.0/3 || hi < 2.0/3 || hi > 1 {
		t.Errorf("CI [%v, %v] (again [%v, %v]) should be seeded and hold 2/3", lo, hi, lo2, hi2)
	}
}

// Many pairs are resampled as counts of the confusion matrix's cells: the
// interval is the one drawing every pair gives, within the bootstrap's
// own noise (2,000 pairs are grouped, 1,999 drawn one by one).
func TestKappaCIOfManyPairs(t *testing.T) {
	cats := []float64{1, 2, 3, 4, 5}
	var judge, human []float64
	for i := range 2000 {
		j := float64(1 + i%5)
		h := j
		switch i % 7 {
		case 0:
			h = min(5, j+1)
		case 3:
			h = max(1, j-1)
		case 5:
			h = float64(1 + (i/7)%5)
		}
		judge, human = append(judge, j), append(human, h)
	}
	k := WeightedKappa(judge, human, cats)
	lo, hi := KappaCI(judge, human, cats, 2000, 1)
	lo1, hi1 := KappaCI(judge[:1999], human[:1999], cats, 2000, 1)
	if lo > k || hi < k || hi-lo < 0.01 {
		t.Errorf("kappa %.4f, grouped CI [%.4f, %.4f]", k, lo, hi)
	}
	if math.Abs(lo-lo1) > 0.01 || math.Abs(hi-hi1) > 0.01 {
		t.Errorf("grouped CI [%.4f, %.4f], drawn one by one [%.4f, %.4f]", lo, hi, lo1, hi1)
	}
}

// alphaBySorting is Krippendorff's alpha as the definition reads: every
// value sorted, and each pair of a unit found in them.
func alphaBySorting(units [][]float64, metric AlphaMetric) float64 {
	var values []float64
	for _, u := range units {
		if len(u) > 1 {
			values = append(values, u...)
		}
	}
	slices.Sort(values)
	values = slices.Compact(values)
	k := len(values)
	if k < 2 {
		return math.NaN()
	}
	index := func(v float64) int { i, _ := slices.BinarySearch(values, v); return i }
	o := make([][]float64, k)
	for i := range o {
		o[i] = make([]float64, k)
	}
	for _, u := range units {
		for i := range u {
			for j := range u {
				if i != j && len(u) > 1 {
					o[index(u[i])][index(u[j])] += 1 / float64(len(u)-1)
				}
			}
		}
	}
	nc := make([]float64, k)
	var n float64
	for c := range o {
		for _, x := range o[c] {
			nc[c] += x
		}
		n += nc[c]
	}
	var do, de float64
	for c := range k {
		for d := range k {
			var dd float64
			switch {
			case metric == Nominal && c != d:
				dd = 1
			case metric == Interval:
				dd = (values[c] - values[d]) * (values[c] - values[d])
			case metric == Ordinal:
				lo, hi := min(c, d), max(c, d)
				for g := lo; g <= hi; g++ {
					dd += nc[g]
				}
				dd -= (nc[lo] + nc[hi]) / 2
				dd *= dd
			}
			do += o[c][d] * dd
			de += nc[c] * nc[d] * dd
		}
	}
	return 1 - (n-1)*do/de
}

// Alpha over scores of a few values (found as they come) and of many
// (sorted) is the same, to the bit, as computed from every value sorted.
func TestKrippendorffAlphaOfFewAndManyValues(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, distinct := range []int{2, 5, 64, 65, 1000} {
		units := make([][]float64, 3000)
		for i := range units {
			truth := rng.IntN(distinct)
			for range 1 + rng.IntN(4) {
				v := min(max(truth+rng.IntN(3)-1, 0), distinct-1)
				units[i] = append(units[i], float64(v)/2)
			}
		}
		for _, metric := range []AlphaMetric{Nominal, Ordinal, Interval} {
			got, want := KrippendorffAlpha(units, metric), alphaBySorting(units, metric)
			if math.Float64bits(got) != math.Float64bits(want) || math.IsNaN(got) {
				t.Errorf("%d values, metric %v: alpha %v, want %v", distinct, metric, got, want)
			}
		}
	}
}
