package web

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"assay/readmodel"
	"assay/report"
	"assay/store"
	"assay/tally"
	"assay/templates"
)

// maxOtherRuns is how many other runs of the dataset a run page lists.
const maxOtherRuns = 20

// loadReportView resolves a report route's run and builds its report view.
func (s *Server) loadReportView(c echo.Context, now time.Time) (*readmodel.Scope, *readmodel.Viewed, templates.ReportView, error) {
	ctx := c.Request().Context()
	sc, err := s.viewScope(c)
	if err != nil {
		return nil, nil, templates.ReportView{}, err
	}
	r, err := s.model.Report(ctx, sc)
	if err != nil {
		return nil, nil, templates.ReportView{}, err
	}
	v, err := r.Page(ctx, s.db, queryOf(c), false, now)
	if err == nil && v.Review != nil && canReview(c, sc) {
		v.Review.Queue = startQueue(sc)
	}
	return sc, r, v, err
}

// runPage handles GET /runs/:id: the run's report under its live progress.
func (s *Server) runPage(c echo.Context) error {
	now := time.Now()
	sc, r, v, err := s.loadReportView(c, now)
	if err != nil {
		return err
	}
	owner, err := s.reportOwner(c, sc, v.Query)
	if err != nil {
		return err
	}
	live := readmodel.RunProgress(sc.Run, r.Summary, now)
	live.CSRF = owner.CSRF
	if err := s.markBatches(c.Request().Context(), sc.Run, &live); err != nil {
		return err
	}
	if err := s.markExecutor(c.Request().Context(), sc.Run, &live); err != nil {
		return err
	}
	if err := s.markInterrupted(c.Request().Context(), sc.Run, &live); err != nil {
		return err
	}
	v.Live = live.Polling
	if v.Audit != nil && owner.CanEdit && sc.Run.Status.Finished() {
		owner.Audit = &templates.AuditStart{Running: s.runner.Auditing(sc.Run.ID)}
		owner.Rejudge = judgeKeysOf(sc.Run.Config)
	}
	page := templates.RunView{Page: s.reportPage(c, sc, sc.Run.Name), Report: v, Owner: owner, Progress: live}
	if page.Page.Flash.Place != "" {
		page.Owner.NewLink = page.Page.Flash
	}
	return s.renderReport(c, sc, templates.Run(page))
}

// renderReport sends a report page, then makes the run's samples table in
// the background (warmSamples): made while the page was computed, it took
// the second core from the report's first request.
func (s *Server) renderReport(c echo.Context, sc *readmodel.Scope, page templ.Component) error {
	if err := render(c, http.StatusOK, page); err != nil {
		return err
	}
	s.model.WarmSamples(sc)
	return nil
}

// sharedReport handles GET /r/:token: the report, read-only, to whoever has the link.
func (s *Server) sharedReport(c echo.Context) error {
	sc, _, v, err := s.loadReportView(c, time.Now())
	if err != nil {
		return err
	}
	page := templates.SharedReportView{Page: s.reportPage(c, sc, sc.Run.Name), Report: v}
	return s.renderReport(c, sc, templates.SharedReport(page))
}

// reportFragment handles GET /runs/:id/report and GET /r/:token/report: the
// report alone, which fetches itself again while the run works.
func (s *Server) reportFragment(c echo.Context) error {
	if since := c.QueryParam("since"); since != "" {
		sc, err := s.viewScope(c)
		if err != nil {
			return err
		}
		token, err := s.model.VersionToken(c.Request().Context(), sc)
		if err != nil {
			return err
		}
		if token == since {
			// Nothing changed: htmx leaves the report in place.
			return c.NoContent(http.StatusNoContent)
		}
	}
	sc, _, v, err := s.loadReportView(c, time.Now())
	if err != nil {
		return err
	}
	v.Live = c.QueryParam("live") == "1"
	return s.renderReport(c, sc, templates.Report(v))
}

// viewScope is a report route's scope in the view its query asks for.
func (s *Server) viewScope(c echo.Context) (*readmodel.Scope, error) {
	sc, err := s.scope(c)
	if err == nil && queryOf(c).View == "reviewed" {
		sc.View = report.Reviewed
	}
	if err == nil {
		sc.Judge = queryOf(c).Judge
	}
	return sc, err
}

func queryOf(c echo.Context) readmodel.Query {
	q := readmodel.Query{A: c.QueryParam("a"), B: c.QueryParam("b"), Delta: strings.TrimSpace(c.QueryParam("delta")),
		Slice: c.QueryParam("slice"), Judge: c.QueryParam("judge")}
	if c.QueryParam("view") == "reviewed" {
		q.View = "reviewed"
	}
	return q
}

// reportOwner gathers what only the owner sees: share links and the other
// runs of the dataset.
func (s *Server) reportOwner(c echo.Context, sc *readmodel.Scope, query string) (templates.ReportOwner, error) {
	ctx := c.Request().Context()
	o := templates.ReportOwner{RunID: sc.Run.ID, Query: query, Tags: strings.Join(sc.Run.Tags, ", "), Note: sc.Run.Note}
	if u := userOf(c); u != nil && u.Role == store.RoleOwner {
		o.CanEdit = true
	}
	if u := userOf(c); u != nil && u.Role == store.RoleOwner && sc.Run.Status.Finished() {
		v, err := tally.Of(s.db).ResultsVersion(ctx, sc.Run.ID)
		if err != nil {
			return o, err
		}
		o.CanDelete, o.Results = true, v.Count
	}
	o.CSRF, _ = c.Get("csrf").(string)
	shares, err := s.db.Shares(ctx, sc.Run.ID)
	if err != nil {
		return o, err
	}
	o.Shares = shareRows(shares)
	links, err := s.db.ReviewLinks(ctx, sc.Run.ID)
	if err != nil {
		return o, err
	}
	o.ReviewLinks = reviewLinkRows(c, links)
	o.OtherRuns, err = s.otherRuns(ctx, sc)
	return o, err
}

// shareRows is the run's share links as the report lists them.
func shareRows(shares []store.Share) []templates.ShareRow {
	var rows []templates.ShareRow
	for _, sh := range shares {
		row := templates.ShareRow{Key: sh.Key, Created: templates.When(sh.CreatedAt), CreatedBy: sh.CreatedBy}
		if sh.RevokedAt != nil {
			row.Revoked = templates.When(*sh.RevokedAt)
		}
		rows = append(rows, row)
	}
	return rows
}

// otherRuns is up to maxOtherRuns other runs of the run's dataset, with
// their conditions and a link comparing each with the run.
func (s *Server) otherRuns(ctx context.Context, sc *readmodel.Scope) ([]templates.OtherRun, error) {
	runs, err := s.db.DatasetRuns(ctx, sc.Dataset.ID, maxOtherRuns+1)
	if err != nil || len(runs) == 0 {
		return nil, err
	}
	names, err := s.db.ConditionNames(ctx, runs[len(runs)-1].ID, runs[0].ID)
	if err != nil {
		return nil, err
	}
	var out []templates.OtherRun
	for _, other := range runs {
		if other.ID == sc.Run.ID || len(out) == maxOtherRuns {
			continue
		}
		out = append(out, templates.OtherRun{
			ID:         other.ID,
			Name:       other.Name,
			Status:     string(other.Status),
			Created:    templates.When(other.CreatedAt),
			Conditions: strings.Join(names[other.ID], ", "),
			CompareURL: fmt.Sprintf("/compare?a=%d&b=%d", sc.Run.ID, other.ID),
		})
	}
	return out, nil
}

// origin is the scheme and host the request came to, for links to copy.
func origin(c echo.Context) string {
	return c.Scheme() + "://" + c.Request().Host
}
