package report

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"sync"

	"assay/stats"
)

// pairSeed fixes the bootstrap, so that a report shows the same interval each time.
const pairSeed = 1

// Side is one side of a paired comparison: for each metric, every sample's
// mean score by its row id.
type Side []map[int64]float64

// Side returns a condition's per-sample means for each of the report's metrics.
func (r *Report) Side(condition string) Side {
	return r.SideFor(condition, r.Metrics)
}

// SideFor returns a condition's per-sample means for the given metrics,
// matched by evaluator and name; a metric the run lacks has no samples.
func (r *Report) SideFor(condition string, metrics []Metric) Side {
	out := make(Side, len(metrics))
	for i, m := range metrics {
		if j := r.MetricIndex(m.Evaluator, m.Name); j >= 0 {
			out[i] = r.Means(j, condition)
		}
	}
	return out
}

// Paired is B compared with A on one metric, over the samples scored under both.
type Paired struct {
	Metric       Metric
	MeanA, MeanB float64
	stats.Paired // B − A with its paired bootstrap 95% interval, wins, ties, losses, n
	// SD is the standard deviation of the differences; MDD the smallest true
	// difference a paired t-test (α = 0.05) detects with 80% power from
	// these samples; P the paired t-test's two-sided p-value.
	SD, MDD, P float64
}

// Needed is how many samples a paired t-test (α = 0.05, power 80%) needs to
// detect a true difference delta, given the spread of this comparison's
// differences; 0 when it cannot say.
func (p Paired) Needed(delta float64) int {
	return stats.SamplesNeeded(p.SD, delta, stats.Alpha, stats.Power)
}

// ComparePaired compares b with a on each metric: the mean of B − A with
// its paired bootstrap 95% interval. The metrics are resampled in parallel:
// 2,000 resamples of 1,000 samples take some milliseconds each.
func ComparePaired(metrics []Metric, a, b Side) []Paired {
	rows := make([]Paired, len(metrics))
	var wg sync.WaitGroup
	for i, m := range metrics {
		wg.Go(func() {
			xa, xb := pairUp(a[i], b[i])
			rows[i] = Paired{Metric: m, MeanA: Mean(xa), MeanB: Mean(xb), Paired: stats.PairedBootstrap(xb, xa, 0, pairSeed)}
			rows[i].SD, rows[i].MDD, rows[i].P = pairedTest(xa, xb)
		})
	}
	wg.Wait()
	return rows
}

// Compare is ComparePaired of condition b with a on every metric, computed
// once per report and pair: every view of the report asks for it.
func (r *Report) Compare(a, b string) []Paired {
	key := [2]string{a, b}
	r.compareMu.Lock()
	if r.compared == nil {
		r.compared = map[[2]string]*pairOnce{}
	}
	p, ok := r.compared[key]
	if !ok {
		p = &pairOnce{}
		r.compared[key] = p
	}
	r.compareMu.Unlock()
	p.once.Do(func() { p.rows = ComparePaired(r.Metrics, r.Side(a), r.Side(b)) })
	return p.rows
}

// pairOnce is one pair's comparison, computed once.
type pairOnce struct {
	once sync.Once
	rows []Paired
}

// pairUp lines up, by row id, the samples present on both sides.
func pairUp(a, b map[int64]float64) (xa, xb []float64) {
	for _, id := range slices.Sorted(maps.Keys(a)) {
		if y, ok := b[id]; ok {
			xa = append(xa, a[id])
			xb = append(xb, y)
		}
	}
	return xa, xb
}

// Gap is how differently one sample scored on the two sides.
type Gap struct {
	SampleRow int64     // the sample's row id
	Gap       float64   // mean over metrics of B − A, each rescaled to 0–1
	A, B      []float64 // per metric; NaN where the sample has no score
}

// Gaps ranks the samples by how far b is from a, at most n of them: either
// way, or only where b is lower when regressions is set. Samples that score
// the same are left out.
func Gaps(metrics []Metric, a, b Side, n int, regressions bool) []Gap {
	byID := map[int64]*Gap{}
	for i, m := range metrics {
		for id, va := range a[i] {
			vb, ok := b[i][id]
			if !ok {
				continue
			}
			g := byID[id]
			if g == nil {
				g = &Gap{SampleRow: id, A: nans(len(metrics)), B: nans(len(metrics))}
				byID[id] = g
			}
			g.A[i] = va
			g.B[i] = vb
			g.Gap += m.Scale.Unit(vb) - m.Scale.Unit(va)
		}
	}
	var out []Gap
	for _, g := range byID {
		g.Gap /= float64(countValid(g.A))
		if math.Abs(g.Gap) >= 1e-9 && (!regressions || g.Gap < 0) {
			out = append(out, *g)
		}
	}
	slices.SortFunc(out, func(x, y Gap) int {
		return cmp.Or(cmp.Compare(math.Abs(y.Gap), math.Abs(x.Gap)), cmp.Compare(x.SampleRow, y.SampleRow))
	})
	return out[:min(n, len(out))]
}

func nans(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = math.NaN()
	}
	return out
}

func countValid(v []float64) int {
	n := 0
	for _, x := range v {
		if !math.IsNaN(x) {
			n++
		}
	}
	return n
}

// pairedTest describes the differences b − a: their standard deviation, the
// minimum detectable difference and the paired t-test's p-value.
func pairedTest(xa, xb []float64) (sd, mdd, p float64) {
	diffs := make([]float64, len(xa))
	for i := range xa {
		diffs[i] = xb[i] - xa[i]
	}
	if len(diffs) < 2 {
		return 0, 0, 1
	}
	_, sd = stats.Describe(diffs)
	return sd, stats.MinDetectable(sd, len(diffs), stats.Alpha, stats.Power), stats.PairedP(diffs)
}

// PairTest is one pair of conditions on one metric among all pairs: the
// paired t-test of B − A, its p-value and the p-value adjusted for every
// pair of the metric (Holm).
type PairTest struct {
	Metric   Metric
	A, B     string
	Diff     float64
	N        int
	P, HolmP float64
}

// AllPairs tests every pair of conditions on every metric, adjusting each
// metric's p-values together (Holm); nil with fewer than three conditions,
// where the paired comparison says all.
func (r *Report) AllPairs() []PairTest {
	r.allPairsOnce.Do(func() {
		if r.scoresOf != nil { // the same scores: their tests, computed once
			r.allPairs = r.scoresOf.AllPairs()
		} else {
			r.allPairs = r.testAllPairs()
		}
	})
	return r.allPairs
}

func (r *Report) testAllPairs() []PairTest {
	if len(r.Conditions) < 3 {
		return nil
	}
	var out []PairTest
	for i, m := range r.Metrics {
		var tests []PairTest
		for ai, a := range r.Conditions {
			for _, b := range r.Conditions[ai+1:] {
				xa, xb := pairTables(r.meanTable(i, a), r.meanTable(i, b))
				if len(xa) < 2 {
					continue
				}
				_, _, p := pairedTest(xa, xb)
				tests = append(tests, PairTest{Metric: m, A: a, B: b, Diff: Mean(xb) - Mean(xa), N: len(xa), P: p})
			}
		}
		ps := make([]float64, len(tests))
		for k, t := range tests {
			ps[k] = t.P
		}
		for k, adj := range stats.Holm(ps) {
			tests[k].HolmP = adj
		}
		out = append(out, tests...)
	}
	return out
}
