package web

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"assay"
	"assay/readmodel"
	"assay/store"
	"assay/templates"
)

// samplePage handles GET /runs/:id/samples/:sample and GET /r/:token/samples/:sample:
// one sample with every response of the run and how each was judged.
func (s *Server) samplePage(c echo.Context) error {
	sc, err := s.scope(c)
	if err != nil {
		return err
	}
	smp, err := s.scopedSample(c, sc)
	if err != nil {
		return err
	}
	return s.renderSample(c, sc, smp, refusedReview{})
}

// renderSample renders a sample's page, with the reason a verdict on one of
// its scores was refused when there is one.
func (s *Server) renderSample(c echo.Context, sc *readmodel.Scope, smp *store.Sample, failed refusedReview) error {
	results, err := s.db.SampleResults(c.Request().Context(), sc.Run.ID, smp.ID)
	if err != nil {
		return err
	}
	nav, err := s.sampleNav(c, sc, smp)
	if err != nil {
		return err
	}
	v := templates.SampleView{
		Page:       s.reportPage(c, sc, "Sample "+smp.SampleID+" · "+runTitle(sc.Run)),
		Report:     readmodel.ReportNav(sc),
		Kind:       string(sc.Dataset.Kind),
		Sample:     readmodel.GoldenRow(*smp, sc.Dataset.Kind),
		Nav:        nav,
		Conditions: readmodel.SampleConditions(sc, results),
	}
	if err := s.reviewControls(c, sc, smp, &v, failed); err != nil {
		return err
	}
	v.SideBySide = c.QueryParam("layout") == "columns"
	q := c.Request().URL.Query()
	q.Del("layout")
	v.StackedURL = sampleURL(sc.Base, smp.ID, q.Encode())
	q.Set("layout", "columns")
	v.ColumnsURL = sampleURL(sc.Base, smp.ID, q.Encode())
	status := http.StatusOK
	if failed.msg != "" && c.Request().Header.Get("HX-Request") == "" {
		status = http.StatusUnprocessableEntity
	}
	return render(c, status, templates.SamplePage(v))
}

// scopedSample is the :sample of the route, which must belong to the report's
// dataset: a share link shows its own run's samples and no others.
func (s *Server) scopedSample(c echo.Context, sc *readmodel.Scope) (*store.Sample, error) {
	id, err := strconv.ParseInt(c.Param("sample"), 10, 64)
	if err != nil || id <= 0 {
		return nil, fmt.Errorf("sample %q: %w", c.Param("sample"), assay.ErrNotFound)
	}
	smp, err := s.db.Sample(c.Request().Context(), id)
	if err != nil {
		return nil, err
	}
	if smp.DatasetID != sc.Run.DatasetID {
		return nil, fmt.Errorf("sample %d of another dataset: %w", id, assay.ErrNotFound)
	}
	return smp, nil
}

// sampleNav leads to the samples before and after this one. With a filter or
// a sort from the samples table, it steps through the table's samples in the
// table's order; otherwise through the dataset in its order.
func (s *Server) sampleNav(c echo.Context, sc *readmodel.Scope, smp *store.Sample) (templates.SampleNav, error) {
	f := readmodel.ParseSampleFilter(c.QueryParams())
	query := f.Query(true).Encode()
	nav := templates.SampleNav{BackURL: sc.Base + "/samples", Position: smp.Ordinal, Total: sc.Dataset.Samples}
	if query != "" {
		nav.BackURL += "?" + query
	}
	linkQuery := query
	if c.QueryParam("layout") == "columns" { // the next sample is read the same way
		linkQuery = strings.TrimPrefix(query+"&layout=columns", "&")
	}
	link := func(id int64) string {
		if id == 0 {
			return ""
		}
		return sampleURL(sc.Base, id, linkQuery)
	}
	if f.Filtering() || f.Sort != "" {
		order, err := s.tableOrder(c, sc, f)
		if err != nil {
			return nav, err
		}
		if i := slices.Index(order, smp.ID); i >= 0 {
			nav.Position = i + 1
			nav.Total = len(order)
			nav.Filtered = true
			if i > 0 {
				nav.PrevURL = link(order[i-1])
			}
			if i+1 < len(order) {
				nav.NextURL = link(order[i+1])
			}
			return nav, nil
		}
	}
	prev, next, err := s.db.SampleNeighbours(c.Request().Context(), sc.Run.DatasetID, smp.Ordinal)
	nav.PrevURL, nav.NextURL = link(prev), link(next)
	return nav, err
}

// tableOrder lists the samples of the filtered, sorted table, each once, where it first appears.
func (s *Server) tableOrder(c echo.Context, sc *readmodel.Scope, f readmodel.SampleFilter) ([]int64, error) {
	_, rows, err := s.model.SampleTable(c.Request().Context(), sc, f)
	if err != nil {
		return nil, err
	}
	seen := make(map[int64]bool, len(rows))
	order := make([]int64, 0, len(rows))
	for _, r := range rows {
		if !seen[r.SampleRow] {
			seen[r.SampleRow] = true
			order = append(order, r.SampleRow)
		}
	}
	return order, nil
}
