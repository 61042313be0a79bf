package web

import (
	"cmp"
	"context"
	"maps"
	"math"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"

	"assay/runner/stats"
	"assay/store"
	"assay/templates"
)

// pairSeed fixes the bootstrap, so that a report shows the same interval each time.
const pairSeed = 1

// maxGaps is how many samples a comparison lists.
const maxGaps = 10

// side is one side of a paired comparison: for each metric, every sample's
// mean score by its row id.
type side []map[int64]float64

// side returns a condition's per-sample means for each of the report's metrics.
func (r *report) side(condition string) side {
	return r.sideFor(condition, r.metrics)
}

// sideFor returns a condition's per-sample means for the given metrics,
// matched by evaluator and name; a metric the run lacks has no samples.
func (r *report) sideFor(condition string, metrics []metricInfo) side {
	out := make(side, len(metrics))
	for i, m := range metrics {
		if j := r.metricIndex(m.Evaluator, m.Name); j >= 0 {
			out[i] = r.means(j, condition)
		}
	}
	return out
}

// comparePaired compares b with a on each metric, over the samples scored
// under both: the mean of B − A with its paired bootstrap 95% interval.
// The metrics are resampled in parallel: 2,000 resamples of 1,000 samples
// take some milliseconds each.
func comparePaired(metrics []metricInfo, a, b side) []templates.PairedRow {
	rows := make([]templates.PairedRow, len(metrics))
	var wg sync.WaitGroup
	for i, m := range metrics {
		wg.Go(func() {
			xa, xb := pairUp(a[i], b[i])
			p := stats.PairedBootstrap(xb, xa, 0, pairSeed)
			meanA, _ := stats.Describe(xa)
			meanB, _ := stats.Describe(xb)
			rows[i] = templates.PairedRow{Metric: metricHead(m), MeanA: meanA, MeanB: meanB, Diff: p.MeanDiff,
				CILo: p.CILo, CIHi: p.CIHi, Wins: p.Wins, Ties: p.Ties, Losses: p.Losses, N: p.N}
		})
	}
	wg.Wait()
	return rows
}

// pairUp lines up, by row id, the samples present on both sides.
func pairUp(a, b map[int64]float64) (xa, xb []float64) {
	for _, id := range slices.Sorted(maps.Keys(a)) {
		if y, ok := b[id]; ok {
			xa, xb = append(xa, a[id]), append(xb, y)
		}
	}
	return xa, xb
}

// gap is how differently one sample scored on the two sides.
type gap struct {
	id   int64
	gap  float64   // mean over metrics of B − A, each rescaled to 0–1
	a, b []float64 // per metric; NaN where the sample has no score
}

// gaps ranks the samples by how far b is from a, at most n of them: either
// way, or only where b is lower when regressions is set. Samples that score
// the same are left out.
func gaps(metrics []metricInfo, a, b side, n int, regressions bool) []gap {
	byID := map[int64]*gap{}
	for i, m := range metrics {
		for id, va := range a[i] {
			vb, ok := b[i][id]
			if !ok {
				continue
			}
			g := byID[id]
			if g == nil {
				g = &gap{id: id, a: nans(len(metrics)), b: nans(len(metrics))}
				byID[id] = g
			}
			g.a[i], g.b[i] = va, vb
			g.gap += m.Scale.unit(vb) - m.Scale.unit(va)
		}
	}
	var out []gap
	for _, g := range byID {
		g.gap /= float64(countValid(g.a))
		if math.Abs(g.gap) >= 1e-9 && (!regressions || g.gap < 0) {
			out = append(out, *g)
		}
	}
	slices.SortFunc(out, func(x, y gap) int {
		return cmp.Or(cmp.Compare(math.Abs(y.gap), math.Abs(x.gap)), cmp.Compare(x.id, y.id))
	})
	return out[:min(n, len(out))]
}

// gapRows describes gaps for a page, reading each sample's id and question;
// base prefixes the sample links, and no link is made when it is empty.
func gapRows(ctx context.Context, db *store.DB, metrics []metricInfo, gs []gap, base string) ([]templates.GapRow, error) {
	rows := make([]templates.GapRow, len(gs))
	for i, g := range gs {
		s, err := db.Sample(ctx, g.id)
		if err != nil {
			return nil, err
		}
		row := templates.GapRow{Name: s.SampleID, Question: excerpt(s.Input, 160), Gap: g.gap}
		if base != "" {
			row.URL = base + "/samples/" + strconv.FormatInt(g.id, 10)
		}
		for j, m := range metrics {
			d := metricHead(m).Digits
			row.A, row.B = append(row.A, templates.Num(g.a[j], d)), append(row.B, templates.Num(g.b[j], d))
		}
		rows[i] = row
	}
	return rows, nil
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

// excerpt cuts s to at most n runes, marking the cut.
func excerpt(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}
