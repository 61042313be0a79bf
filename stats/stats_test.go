package stats

import (
	"encoding/json"
	"math"
	"testing"
)

const eps = 1e-6

func near(a, b float64) bool { return math.Abs(a-b) < eps }

// naiveMeanStd is an independent two-pass formula to check against.
func naiveMeanStd(xs []float64) (float64, float64) {
	var sum float64
	for _, x := range xs {
		sum += x
	}
	mean := sum / float64(len(xs))
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(len(xs)-1))
}

func TestDescribe(t *testing.T) {
	tests := []struct {
		name      string
		in        []float64
		mean, std float64
	}{
		{"empty", nil, 0, 0},
		{"one", []float64{4}, 4, 0},
		{"all equal", []float64{3, 3, 3}, 3, 0},
		{"textbook", []float64{2, 4, 4, 4, 5, 5, 7, 9}, 5, math.Sqrt(32.0 / 7)},
		{"two", []float64{1, 5}, 3, math.Sqrt(8)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mean, std := Describe(tt.in)
			if !near(mean, tt.mean) || !near(std, tt.std) {
				t.Errorf("Describe(%v) = %v, %v; want %v, %v", tt.in, mean, std, tt.mean, tt.std)
			}
		})
	}
}

func TestTQuantile(t *testing.T) {
	tests := []struct {
		df   int
		want float64
	}{
		{1, 12.706205},
		{2, 4.302653},
		{9, 2.262157},
		{29, 2.045230},
	}
	for _, tt := range tests {
		if got := TQuantile(0.975, tt.df); !near(got, tt.want) {
			t.Errorf("TQuantile(0.975, %d) = %v, want %v", tt.df, got, tt.want)
		}
	}
}

func TestClusteredHandChecked(t *testing.T) {
	// Per-sample means 2, 4, 5; the empty group is skipped.
	groups := [][]float64{{1, 2, 3}, {4}, {}, {5, 5}}
	got := Clustered(groups)

	mean, std := naiveMeanStd([]float64{2, 4, 5})
	stderr := std / math.Sqrt(3)
	half := 4.302653 * stderr // t(0.975, 2)
	want := Summary{Mean: mean, Std: std, Stderr: stderr, CILo: mean - half, CIHi: mean + half, N: 6, Samples: 3}
	if !near(got.Mean, want.Mean) || !near(got.Std, want.Std) || !near(got.Stderr, want.Stderr) ||
		!near(got.CILo, want.CILo) || !near(got.CIHi, want.CIHi) || got.N != want.N || got.Samples != want.Samples {
		t.Errorf("Clustered = %+v\nwant        %+v", got, want)
	}
	if !near(got.Mean, 11.0/3) || !near(got.Std, math.Sqrt(7.0/3)) {
		t.Errorf("mean, std = %v, %v; want 11/3, sqrt(7/3)", got.Mean, got.Std)
	}
}

// TestClusteredCountsSamplesNotScores shows why repetitions are clustered:
// ten repetitions of two samples are two observations, not twenty.
func TestClusteredCountsSamplesNotScores(t *testing.T) {
	rep := func(v float64) []float64 {
		g := make([]float64, 10)
		for i := range g {
			g[i] = v
		}
		return g
	}
	got := Clustered([][]float64{rep(1), rep(5)})
	if got.Samples != 2 || got.N != 20 {
		t.Fatalf("Samples, N = %d, %d; want 2, 20", got.Samples, got.N)
	}
	// std of {1, 5} is sqrt(8); stderr = sqrt(8)/sqrt(2) = 2; t(0.975, 1) = 12.706205.
	if !near(got.Stderr, 2) || !near(got.CIHi-got.Mean, 2*12.706205) {
		t.Errorf("Stderr = %v, half width = %v; want 2, %v", got.Stderr, got.CIHi-got.Mean, 2*12.706205)
	}
}

func TestClusteredEdgeCasesAreJSONSafe(t *testing.T) {
	tests := []struct {
		name   string
		groups [][]float64
		want   Summary
	}{
		{"nil", nil, Summary{}},
		{"only empty groups", [][]float64{{}, {}}, Summary{}},
		{"one sample", [][]float64{{2, 4}}, Summary{Mean: 3, CILo: 3, CIHi: 3, N: 2, Samples: 1}},
		{"one score", [][]float64{{4}}, Summary{Mean: 4, CILo: 4, CIHi: 4, N: 1, Samples: 1}},
		{"all equal", [][]float64{{3, 3}, {3}, {3, 3, 3}}, Summary{Mean: 3, CILo: 3, CIHi: 3, N: 6, Samples: 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Clustered(tt.groups)
			if got != tt.want {
				t.Errorf("Clustered = %+v, want %+v", got, tt.want)
			}
			if _, err := json.Marshal(got); err != nil {
				t.Errorf("json: %v", err)
			}
		})
	}
}

func TestRepetitionSpreadAndDisagreement(t *testing.T) {
	tests := []struct {
		name     string
		groups   [][]float64
		spread   float64
		disagree float64
	}{
		{"empty", nil, 0, 0},
		{"single scores only", [][]float64{{1}, {5}}, 0, 0},
		{"all agree", [][]float64{{4, 4, 4}, {2, 2}}, 0, 0},
		// stds: sqrt(2), 0 (the single score is skipped) → mean sqrt(2)/2; one of two disagrees.
		{"mixed", [][]float64{{1, 3}, {2, 2}, {5}}, math.Sqrt(2) / 2, 0.5},
		{"all disagree", [][]float64{{1, 2}, {3, 5}}, (math.Sqrt(0.5) + math.Sqrt(2)) / 2, 1},
		{"within tolerance", [][]float64{{1, 1 + 1e-12}}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RepetitionSpread(tt.groups); !near(got, tt.spread) {
				t.Errorf("RepetitionSpread = %v, want %v", got, tt.spread)
			}
			if got := Disagreement(tt.groups); !near(got, tt.disagree) {
				t.Errorf("Disagreement = %v, want %v", got, tt.disagree)
			}
		})
	}
}

func TestFromSumsAgreesWithDescribe(t *testing.T) {
	for _, values := range [][]float64{{}, {4}, {1, 5}, {3, 3, 3}, {0.2, 0.9, 0.4, 1}, {1, 2, 3, 4, 5, 5, 5}} {
		var sum, sumSq float64
		for _, v := range values {
			sum += v
			sumSq += v * v
		}
		m1, s1 := Describe(values)
		m2, s2 := FromSums(len(values), sum, sumSq)
		if math.Abs(m1-m2) > 1e-12 || math.Abs(s1-s2) > 1e-12 {
			t.Errorf("%v: Describe %v ± %v, FromSums %v ± %v", values, m1, s1, m2, s2)
		}
	}
}

// Welch's interval of a difference of means, as scipy's
// ttest_ind(own, rest, equal_var=False).confidence_interval() gives it:
// own-family errors 1.0 and 1.2 against 30 others evenly in [−1.5, 1.5]
// lie in [0.67, 1.53] (df 11.22); the smaller group's df (1) would give
// [−1.37, 3.57] and hide the preference.
func TestWelchInterval(t *testing.T) {
	own := []float64{1.0, 1.2}
	var rest []float64
	for i := range 30 {
		rest = append(rest, -1.5+3*float64(i)/29)
	}
	se := func(xs []float64) float64 {
		m := 0.0
		for _, x := range xs {
			m += x
		}
		m /= float64(len(xs))
		ss := 0.0
		for _, x := range xs {
			ss += (x - m) * (x - m)
		}
		return math.Sqrt(ss / float64(len(xs)-1) / float64(len(xs)))
	}
	sa, sb := se(own), se(rest)
	df := WelchDF(sa, len(own), sb, len(rest))
	if math.Abs(df-11.216) > 0.001 {
		t.Errorf("Welch df %.4f, want 11.216", df)
	}
	half := TQuantileNu(0.975, df) * math.Hypot(sa, sb)
	lo, hi := 1.1-half, 1.1+half
	if math.Round(lo*100)/100 != 0.67 || math.Round(hi*100)/100 != 1.53 {
		t.Errorf("Welch interval [%.4f, %.4f], want [0.67, 1.53]", lo, hi)
	}
	if got := TQuantileNu(0.975, 9); math.Abs(got-2.262157) > 1e-6 {
		t.Errorf("t(0.975, 9) = %.6f, want 2.262157", got)
	}
	if got := WelchDF(0, 3, 0, 4); got != 5 {
		t.Errorf("two groups without spread: df %v, want 5", got)
	}
}
