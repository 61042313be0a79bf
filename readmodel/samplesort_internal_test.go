package readmodel

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"assay/report"
	"assay/tally"
)

// The samples table's sort puts rows in the order a stable sort by the
// column, then by sample and condition, gives: with ties, rows without the
// column's value, NaN, a condition the run does not list, either direction.
func TestSampleSortIsTheStableOrder(t *testing.T) {
	metrics := []report.Metric{{Evaluator: "rubric", Name: "completeness"}, {Evaluator: "exact_match", Name: "exact_match"}}
	condOrder := map[string]int{"baseline": 0, "with-docs": 1}
	rng := rand.New(rand.NewPCG(5, 6))
	var rows []*report.SampleRow
	for ordinal := 1; ordinal <= 300; ordinal++ {
		for _, c := range []string{"with-docs", "baseline", "unlisted", "also-unlisted"} {
			r := &report.SampleRow{SampleCounts: tally.SampleCounts{SampleKey: tally.SampleKey{SampleRow: int64(ordinal), Condition: c},
				Ordinal: ordinal % 97, Errors: rng.IntN(3), Claims: rng.IntN(2)}}
			for range metrics {
				m := report.SampleMetric{Mean: float64(rng.IntN(5)), Std: float64(rng.IntN(3)) / 2, N: rng.IntN(3)}
				if rng.IntN(50) == 0 {
					m.Mean = math.NaN()
				}
				r.Metrics = append(r.Metrics, m)
			}
			rows = append(rows, r)
		}
	}
	rng.Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
	for _, by := range []string{"", "sample", "condition", "errors", "claims", "spread", "rubric.completeness", "exact_match.exact_match", "no.such"} {
		for _, desc := range []bool{false, true} {
			f := SampleFilter{Sort: by, Desc: desc}
			want := slices.Clone(rows)
			value := f.sortValue(metrics, condOrder)
			slices.SortStableFunc(want, func(a, b *report.SampleRow) int {
				va, oka := value(a)
				vb, okb := value(b)
				if oka != okb {
					if oka {
						return -1
					}
					return 1
				}
				c := cmp.Compare(va, vb)
				if desc {
					c = -c
				}
				return cmp.Or(c, cmp.Compare(a.Ordinal, b.Ordinal), cmp.Compare(condOrder[a.Condition], condOrder[b.Condition]))
			})
			got := slices.Clone(rows)
			f.SortRows(got, metrics, condOrder)
			for i := range got {
				if got[i] != want[i] {
					t.Errorf("sort %q desc %v: row %d is sample %d under %s, want sample %d under %s", by, desc, i,
						got[i].SampleRow, got[i].Condition, want[i].SampleRow, want[i].Condition)
					break
				}
			}
		}
	}
}
