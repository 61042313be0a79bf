package web

import (
	"context"
	"strconv"

	"assay/internal/text"
	"assay/report"
	"assay/store"
	"assay/templates"
)

// maxGaps is how many samples a comparison lists.
const maxGaps = 10

// pairedRows renders the comparison of B with A, one row per metric.
func pairedRows(metrics []report.Metric, a, b report.Side) []templates.PairedRow {
	var rows []templates.PairedRow
	for _, p := range report.ComparePaired(metrics, a, b) {
		rows = append(rows, templates.PairedRow{
			Metric: metricHead(p.Metric),
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

// gapRows describes gaps for a page, reading each sample's id and question;
// base prefixes the sample links, and no link is made when it is empty.
func gapRows(ctx context.Context, db *store.DB, metrics []report.Metric, gs []report.Gap, base string) ([]templates.GapRow, error) {
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
