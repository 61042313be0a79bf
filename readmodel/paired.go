package readmodel

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"

	"assay/internal/text"
	"assay/report"
	"assay/store"
	"assay/templates"
)

// MaxGaps is how many samples a comparison lists.
const MaxGaps = 10

// PairedRows renders the comparison of B with A, one row per metric.
// With hasDelta each row says how many samples would detect delta.
func PairedRows(compared []report.Paired, delta float64, hasDelta bool) []templates.PairedRow {
	var rows []templates.PairedRow
	for _, p := range compared {
		needed := ""
		if hasDelta {
			switch n := p.Needed(delta); {
			case p.N < 2 || n == 0:
				needed = "—"
			default:
				needed = strconv.Itoa(n)
			}
		}
		rows = append(rows, templates.PairedRow{
			MDD:    p.MDD,
			Needed: needed,
			Metric: MetricHead(p.Metric),
			MeanA:  p.MeanA,
			MeanB:  p.MeanB,
			Diff:   p.MeanDiff,
			CILo:   p.CILo,
			CIHi:   p.CIHi,
			Wins:   p.Wins,
			Ties:   p.Ties,
			Losses: p.Losses,
			N:      p.N,
		})
	}
	return rows
}

// GapRows describes gaps for a page, reading each sample's id and question;
// base prefixes the sample links, and no link is made when it is empty.
func GapRows(ctx context.Context, db *store.DB, metrics []report.Metric, gs []report.Gap, base string) ([]templates.GapRow, error) {
	rows := make([]templates.GapRow, len(gs))
	for i, g := range gs {
		s, err := db.Sample(ctx, g.SampleRow)
		if err != nil {
			return nil, err
		}
		row := templates.GapRow{Name: s.SampleID, Question: text.Clip(s.Input, 160), Gap: g.Gap}
		if base != "" {
			row.URL = base + "/samples/" + strconv.FormatInt(g.SampleRow, 10)
		}
		for j, m := range metrics {
			row.A = append(row.A, templates.Num(g.A[j], m.Digits()))
			row.B = append(row.B, templates.Num(g.B[j], m.Digits()))
		}
		rows[i] = row
	}
	return rows, nil
}

// allPairRows shows every pair's paired t-test with its Holm-adjusted p,
// and apart those whose adjusted p is below 0.05, smallest first.
func allPairRows(tests []report.PairTest) (all, differ []templates.PairTestRow) {
	row := func(t report.PairTest) templates.PairTestRow {
		d := t.Metric.Digits()
		return templates.PairTestRow{Metric: MetricHead(t.Metric).Label(), A: t.A, B: t.B,
			Diff: templates.Signed(t.Diff, d), N: t.N, P: pValue(t.P), HolmP: pValue(t.HolmP), Significant: t.HolmP < 0.05}
	}
	var significant []report.PairTest
	for _, t := range tests {
		all = append(all, row(t))
		if t.HolmP < 0.05 {
			significant = append(significant, t)
		}
	}
	slices.SortStableFunc(significant, func(a, b report.PairTest) int { return cmp.Compare(a.HolmP, b.HolmP) })
	for _, t := range significant {
		differ = append(differ, row(t))
	}
	return all, differ
}

// pValue writes a p-value as papers do: three decimals, "< 0.001" below.
func pValue(p float64) string {
	if p < 0.001 {
		return "< 0.001"
	}
	return fmt.Sprintf("%.3f", p)
}
