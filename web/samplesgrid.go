package web

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"assay/internal/text"
	"assay/readmodel"
	"assay/report"
	"assay/templates"
)

// samplesGrid renders the samples table as a grid: one row per sample, a
// column per condition with the chosen metric (the thresholds' metric, else
// the first) as mean ± std, in the filtered table's order of samples.
func (s *Server) samplesGrid(c echo.Context, sc *readmodel.Scope, f readmodel.SampleFilter, stats *report.SampleTable,
	rows []*report.SampleRow, v templates.SamplesView) error {
	mi := 0
	for i, m := range stats.Metrics {
		if readmodel.MetricKey(m) == f.Metric {
			mi = i
		}
	}
	var order []int64
	bySample := map[int64]map[string]*report.SampleRow{}
	for _, r := range rows {
		if bySample[r.SampleRow] == nil {
			bySample[r.SampleRow] = map[string]*report.SampleRow{}
			order = append(order, r.SampleRow)
		}
		bySample[r.SampleRow][r.Condition] = r
	}
	v.Grid = &templates.SampleGrid{Conditions: v.Conditions}
	if len(stats.Metrics) > 0 {
		v.Grid.Metric = readmodel.MetricNamer(stats.Metrics)(stats.Metrics[mi])
	}
	v.Pager = newPager(c.QueryParam("page"), sampleRowsPerPage, len(order), pageURL(sc.Base+"/samples", f.Query(false)))
	first := (v.Pager.Page - 1) * sampleRowsPerPage
	page := order[first:min(first+sampleRowsPerPage, len(order))]
	heads, err := s.db.SampleHeads(c.Request().Context(), page, 2*questionChars)
	if err != nil {
		return err
	}
	query, name := f.Query(true).Encode(), readmodel.MetricNamer(stats.Metrics)
	for _, id := range page {
		h := heads[id]
		gr := templates.SampleGridRow{URL: sampleURL(sc.Base, id, query), Question: text.Clip(h.Input, questionChars),
			Answer: text.Clip(h.Reference, answerChars)}
		for _, cond := range v.Conditions {
			r := bySample[id][cond]
			if r == nil {
				gr.Cells = append(gr.Cells, templates.SampleGridCell{})
				continue
			}
			row := readmodel.SampleTableRow(r, stats.Metrics, name)
			gr.Name = row.Name
			cell := templates.SampleGridCell{Shown: true, Errors: row.Errors + row.JudgeErrors,
				URL: sampleURL(sc.Base, id, query) + "#" + readmodel.ConditionAnchor(cond)}
			if mi < len(row.Metrics) {
				cell.Metric = row.Metrics[mi]
			}
			gr.Cells = append(gr.Cells, cell)
		}
		v.Grid.Rows = append(v.Grid.Rows, gr)
	}
	v.Matching = len(order)
	return render(c, http.StatusOK, templates.Samples(v))
}
