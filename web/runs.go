package web

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"assay"
	"assay/readmodel"
	"assay/report"
	"assay/runner"
	"assay/runner/llm"
	"assay/store"
	"assay/tally"
	"assay/templates"
)

// runsPerPage is how many runs a page of the Runs list shows.
const runsPerPage = 50

// pageQuery is the query of a list's pages: its search, then the page's number.
func pageQuery(q string) string {
	if q == "" {
		return "page="
	}
	return "q=" + url.QueryEscape(q) + "&page="
}

// runsPage handles GET /runs.
func (s *Server) runsPage(c echo.Context) error {
	return s.renderRuns(c, http.StatusOK, templates.ImportForm{})
}

// renderRuns renders the Runs page with the import form as given.
func (s *Server) renderRuns(c echo.Context, status int, form templates.ImportForm) error {
	ctx := c.Request().Context()
	form.MaxMiB = s.cfg.MaxUpload >> 20
	v := templates.RunsView{Page: s.page(c, "Runs", "runs"), Import: form, Query: strings.TrimSpace(c.QueryParam("q"))}
	// A page of runs, newest first: a team's CI adds a run to the list at
	// every change, and 3,000 of them made a page of 2.2 MB in 0.3 s. The
	// page's runs alone are read; a search reads every run's texts first.
	var list []tally.RunSummary
	var err error
	if v.Query == "" {
		if v.All, err = s.db.RunCount(ctx); err != nil {
			return err
		}
		v.Matched = v.All
		v.Pager = newPager(c.QueryParam("page"), runsPerPage, v.All, "/runs?"+pageQuery(v.Query))
		list, err = tally.Of(s.db).RunPage(ctx, (v.Pager.Page-1)*runsPerPage, runsPerPage)
	} else {
		var texts []store.RunText
		if texts, err = s.db.RunTexts(ctx); err != nil {
			return err
		}
		v.All = len(texts)
		texts = slices.DeleteFunc(texts, func(r store.RunText) bool { return !matchesRun(r, v.Query) })
		v.Matched = len(texts)
		v.Pager = newPager(c.QueryParam("page"), runsPerPage, len(texts), "/runs?"+pageQuery(v.Query))
		var ids []int64
		for _, r := range texts[(v.Pager.Page-1)*runsPerPage : min(v.Pager.Page*runsPerPage, len(texts))] {
			ids = append(ids, r.ID)
		}
		list, err = tally.Of(s.db).RunsByID(ctx, ids)
	}
	if err != nil {
		return err
	}
	if err := tally.Of(s.db).NameConditions(ctx, list); err != nil {
		return err
	}
	for _, r := range list {
		row := readmodel.RunRow(r)
		if row.Headline, err = s.model.HeadlineView(ctx, &r.Run); err != nil {
			return err
		}
		if !r.Status.Finished() { // a run whose process died reads as such here too
			if in, err := s.runner.Interrupted(ctx, &r.Run); err != nil {
				return err
			} else if in != nil {
				row.Status = "interrupted"
			}
		}
		v.Runs = append(v.Runs, row)
	}
	return render(c, status, templates.Runs(v))
}

// runProgress handles GET /runs/:id/progress: the live fragment of the run page.
func (s *Server) runProgress(c echo.Context) error {
	run, err := s.pathRun(c)
	if err != nil {
		return err
	}
	live, err := s.liveProgress(c, run)
	if err != nil {
		return err
	}
	// The report under the progress refreshes on this event, so that both
	// show the same moment of the run; it is sent once more when the run ends.
	c.Response().Header().Set("HX-Trigger", "run-progress")
	return render(c, http.StatusOK, templates.RunLive(live))
}

// retryErrors handles POST /runs/:id/retry-errors: a finished run does its
// failed tasks again.
func (s *Server) retryErrors(c echo.Context) error {
	run, err := s.pathRun(c)
	if err != nil {
		return err
	}
	r, err := s.runner.RetryFailed(c.Request().Context(), run.ID)
	switch code := assay.ErrorCode(err); {
	case code == assay.ECONFLICT || code == assay.EINVALID:
		setFlash(c, "error", "Not retried: "+strings.TrimSuffix(assay.ErrorMessage(err), ".")+".")
	case err != nil:
		return err
	default:
		s.log.Info("retrying failed tasks", "run_id", run.ID, "tasks", r.Tasks, "rejudged", r.Rejudge, "by", store.Actor(c.Request().Context()))
		setFlash(c, "ok", fmt.Sprintf("Retrying %s of run %d; what succeeded stays.", r, run.ID))
	}
	return redirect(c, fmt.Sprintf("/runs/%d", run.ID))
}

// cancelRun handles POST /runs/:id/cancel.
func (s *Server) cancelRun(c echo.Context) error {
	run, err := s.pathRun(c)
	if err != nil {
		return err
	}
	if run.Status.Finished() {
		setFlash(c, "info", fmt.Sprintf("Run %d had already ended (%s).", run.ID, run.Status))
	} else if err := s.runner.Cancel(c.Request().Context(), run.ID); err != nil {
		return err
	} else {
		setFlash(c, "ok", fmt.Sprintf("Cancelled run %d.", run.ID)) // the run's own message says what now
	}
	return redirect(c, fmt.Sprintf("/runs/%d", run.ID))
}

// deleteRun handles POST /runs/:id/delete: a run that is over, with all it holds.
func (s *Server) deleteRun(c echo.Context) error {
	run, err := s.pathRun(c)
	if err != nil {
		return err
	}
	n, err := s.db.DeleteRun(c.Request().Context(), run.ID)
	if err != nil {
		return err
	}
	s.log.Info("run deleted", "run_id", run.ID, "results", n, "by", store.Actor(c.Request().Context()))
	setFlash(c, "ok", fmt.Sprintf("Deleted run #%d “%s” and its %s results.", run.ID, run.Name, templates.Int(n)))
	return redirect(c, "/runs")
}

// resumeRun handles POST /runs/:id/resume.
func (s *Server) resumeRun(c echo.Context) error {
	run, err := s.pathRun(c)
	if err != nil {
		return err
	}
	if err := s.runner.Resume(c.Request().Context(), run.ID); assay.ErrorCode(err) == assay.ECONFLICT || assay.ErrorCode(err) == assay.EINVALID {
		setFlash(c, "error", "Not resumed: "+strings.TrimSuffix(assay.ErrorMessage(err), ".")+".")
	} else if err != nil {
		return err
	} else {
		setFlash(c, "ok", fmt.Sprintf("Resumed run %d: finished tasks are not done again.", run.ID))
	}
	return redirect(c, fmt.Sprintf("/runs/%d", run.ID))
}

func (s *Server) pathRun(c echo.Context) (*store.Run, error) {
	id, err := pathID(c)
	if err != nil {
		return nil, err
	}
	return s.db.Run(c.Request().Context(), id)
}

// stalledAfter is how long a call may take before the live page says that
// calls are stalling rather than estimate the time left.
const stalledAfter = time.Minute

// liveProgress gathers the live part of a run page, from the run's report
// (the same scans, cached while nothing changes).
func (s *Server) liveProgress(c echo.Context, run *store.Run) (templates.RunProgress, error) {
	ctx := c.Request().Context()
	totals, err := report.Totals(ctx, s.db, run)
	if err != nil {
		return templates.RunProgress{}, err
	}
	p := readmodel.RunProgress(run, totals, time.Now())
	p.CSRF, _ = c.Get("csrf").(string)
	if u := userOf(c); u == nil || u.Role != store.RoleOwner {
		p.CanCancel, p.CanResume, p.CanRetry = false, false, false // an owner's buttons
	}
	s.markEngine(run, &p)
	if err := s.markBatches(ctx, run, &p); err != nil {
		return p, err
	}
	if err := s.markExecutor(ctx, run, &p); err != nil {
		return p, err
	}
	if err := s.markInterrupted(ctx, run, &p); err != nil {
		return p, err
	}
	if run.Status == store.RunRunning && !p.Paused && !p.Interrupted && !s.runner.Active(run.ID) && !store.IsPostgres(s.db.Path) {
		s.markDiskFull(&p)
	}
	return p, nil
}

// markEngine says what this server's engine knows of the run: paused and
// why, the calls in flight (stalled when the oldest is old), and the
// limits it is held to.
func (s *Server) markEngine(run *store.Run, p *templates.RunProgress) {
	if msg := s.runner.Paused(run.ID); msg != "" {
		p.Message, p.Paused = msg, true
	}
	if n, oldest := s.runner.InFlight(run.ID); n > 0 && !run.Status.Finished() {
		p.InFlight = fmt.Sprintf("%s in flight, the oldest for %s", templates.Count(n, "call"), readmodel.Duration(oldest))
		if oldest > stalledAfter {
			// An estimate from the tasks done says nothing while calls do not come back.
			p.Stalled, p.ETA = true, ""
		}
	}
	if !run.Status.Finished() {
		p.Limits = limitLines(s.runner.Limits(run.ID), s.runner.RateLimited(run.ID))
	}
}

// markDiskFull says a run another process executes is paused when the
// disk is full: that process cannot record its pause in the database,
// but this server can see the disk.
func (s *Server) markDiskFull(p *templates.RunProgress) {
	if free, err := diskFree(s.db.Path); err == nil && free < store.FullBelow {
		p.Message, p.Paused = fmt.Sprintf("Paused: the disk holding the database has %s left, so the process executing this run "+
			"cannot save its results. Nothing already saved is lost; it tries again every few seconds and goes on by itself once there is room.",
			templates.Bytes(int64(free))), true
	}
}

// diskFree is the room left on the database's disk (a variable for tests).
var diskFree = store.DiskFree

// markBatches says on the progress of a run whose judge calls go in
// batches how its batches stand.
func (s *Server) markBatches(ctx context.Context, run *store.Run, p *templates.RunProgress) error {
	if run.Config == nil || run.Config.Batch == nil || !run.Config.Batch.Judge {
		return nil
	}
	batches, err := s.db.BatchCounts(ctx, run.ID)
	if err != nil {
		return err
	}
	waiting := 0
	if !run.Status.Finished() {
		if waiting, err = s.db.AnswersAwaiting(ctx, run.ID); err != nil {
			return err
		}
	}
	p.Batches = readmodel.BatchesLine(batches, waiting)
	if waiting > 0 {
		p.Answered = p.Done + waiting
	}
	return nil
}

// markExecutor says on the progress of a run other processes execute
// (other servers on the same database, an assay run) which ones, and how
// far each got.
func (s *Server) markExecutor(ctx context.Context, run *store.Run, p *templates.RunProgress) error {
	if run.Status != store.RunRunning {
		return nil
	}
	executors, err := s.db.Executors(ctx, run.ID)
	if err != nil {
		return err
	}
	if s.runner.Active(run.ID) && len(executors) <= 1 {
		return nil // this server alone: its own progress says it all
	}
	p.Executor = readmodel.ExecutorsLine(executors)
	return nil
}

// markInterrupted says on the progress of an unfinished run that no process
// executes who executed it last, and whether this server takes it over or
// what it lacks to.
func (s *Server) markInterrupted(ctx context.Context, run *store.Run, p *templates.RunProgress) error {
	in, err := s.runner.Interrupted(ctx, run)
	if err != nil {
		return err
	}
	if in != nil {
		p.Status, p.ETA, p.Interrupted = "interrupted", "", true
		if len(in.Unset) == 0 {
			p.Message = in.Describe() + ". This server takes it over within a few seconds and goes on from its finished tasks."
		} else {
			missing, verb := runner.DescribeUnset(in.Unset)
			p.Message = fmt.Sprintf("%s. This server cannot take it over: %s %s not set in its environment. "+
				"Resume it where they are set with  assay run --resume %d, or set them here and restart the server.",
				in.Describe(), missing, verb, run.ID)
		}
	}
	return nil
}

// untilText is a time soon, as a clock reads it and how far off it is.
func untilText(t time.Time) string {
	return fmt.Sprintf("%s (in %s)", t.Local().Format("15:04:05"), max(time.Until(t), 0).Round(time.Second))
}

// limitLines say where each endpoint's adaptive limit stands —
// "api.openai.com: 12 at once, up to 40 now (max_concurrent 100), paced to
// its rate limit" — and how many of the run's calls were answered 429.
func limitLines(states []llm.LimitState, limited map[string]int64) []string {
	var out []string
	var n int64
	for _, c := range limited {
		n += c
	}
	for _, l := range states {
		line := fmt.Sprintf("%s: %d at once, up to %d now", l.Endpoint, l.InFlight, l.Limit)
		if l.Limit < l.Ceiling {
			line += fmt.Sprintf(" (max_concurrent %d)", l.Ceiling)
		}
		switch {
		case l.Held && !l.Until.IsZero():
			line += ", held by the provider (Retry-After, or no tokens left) until " + untilText(l.Until)
		case l.Paced && !l.Until.IsZero():
			line += ", paced to its rate limit: the next call at " + untilText(l.Until)
		case l.Paced:
			line += ", paced to its rate limit"
		}
		out = append(out, line)
	}
	if n > 0 {
		out = append(out, fmt.Sprintf("%s of this run answered 429 (rate limited), waited for and tried again", templates.Count(int(n), "call")))
	}
	return out
}
