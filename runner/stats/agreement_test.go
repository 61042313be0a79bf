package stats

import (
	"math"
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
