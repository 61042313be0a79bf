package web

import (
	"fmt"
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"assay/internal/text"
	"assay/readmodel"
	"assay/report"
	"assay/store"
	"assay/templates"
)

const (
	sampleRowsPerPage = 50
	questionChars     = 160 // of a question in the samples table
	answerChars       = 90  // of a golden answer in the samples table
)

// samplesPage handles GET /runs/:id/samples and GET /r/:token/samples: one
// row per sample and condition, filtered, sorted and paged as the query says.
func (s *Server) samplesPage(c echo.Context) error {
	ctx := c.Request().Context()
	sc, err := s.scope(c)
	if err != nil {
		return err
	}
	f := readmodel.ParseSampleFilter(c.QueryParams())
	stats, rows, err := s.model.SampleTable(ctx, sc, f)
	if err != nil {
		return err
	}
	v := readmodel.SamplesView(sc, f, stats, len(rows))
	v.Page = s.reportPage(c, sc, "Samples · "+runTitle(sc.Run))
	if canReview(c, sc) {
		v.Queue = startQueue(sc)
	}
	table, grid := f, f
	table.Grid, grid.Grid = false, true
	v.TableURL, v.GridURL = listURL(sc.Base+"/samples", table.Query(false)), listURL(sc.Base+"/samples", grid.Query(false))
	if f.Grid {
		return s.samplesGrid(c, sc, f, stats, rows, v)
	}
	v.Pager = newPager(c.QueryParam("page"), sampleRowsPerPage, len(rows), pageURL(sc.Base+"/samples", f.Query(false)))
	first := (v.Pager.Page - 1) * sampleRowsPerPage
	page := rows[first:min(first+sampleRowsPerPage, len(rows))]
	if v.Rows, err = s.sampleTableRows(c, sc, f, stats.Metrics, page); err != nil {
		return err
	}
	return render(c, http.StatusOK, templates.Samples(v))
}

// sampleTableRows turns a page of rows into the table's view, with the
// beginning of each sample's question and golden answer.
func (s *Server) sampleTableRows(c echo.Context, sc *readmodel.Scope, f readmodel.SampleFilter, metrics []report.Metric,
	page []*report.SampleRow) ([]templates.SampleTableRow, error) {
	ids := make([]int64, 0, len(page))
	for _, r := range page {
		ids = append(ids, r.SampleRow)
	}
	heads, err := s.db.SampleHeads(c.Request().Context(), ids, 2*questionChars) // room for collapsed whitespace
	if err != nil {
		return nil, err
	}
	query, name := f.Query(true).Encode(), readmodel.MetricNamer(metrics)
	out := make([]templates.SampleTableRow, 0, len(page))
	for _, r := range page {
		row := readmodel.SampleTableRow(r, metrics, name)
		h := heads[r.SampleRow]
		row.Question, row.Answer = text.Clip(h.Input, questionChars), text.Clip(h.Reference, answerChars)
		row.URL = sampleURL(sc.Base, r.SampleRow, query) + "#" + readmodel.ConditionAnchor(r.Condition)
		out = append(out, row)
	}
	return out, nil
}

// sampleURL is a sample's page in a report, keeping the samples table's query.
func sampleURL(base string, sampleID int64, query string) string {
	u := fmt.Sprintf("%s/samples/%d", base, sampleID)
	if query != "" {
		u += "?" + query
	}
	return u
}

// pageURL is a list's URL to which a page number is appended.
func pageURL(path string, q interface{ Encode() string }) string {
	if enc := q.Encode(); enc != "" {
		return path + "?" + enc + "&page="
	}
	return path + "?page="
}

// listURL is a list's URL with its query, if any.
func listURL(path string, q url.Values) string {
	if enc := q.Encode(); enc != "" {
		return path + "?" + enc
	}
	return path
}

func runTitle(run *store.Run) string {
	if run.Name != "" {
		return run.Name
	}
	return fmt.Sprintf("run %d", run.ID)
}
