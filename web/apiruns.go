package web

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"assay"
	"assay/report"
	"assay/store"
	"assay/tally"
)

// RunJSON is a run as the API lists it.
type RunJSON struct {
	ID         int64      `json:"run_id"`
	Name       string     `json:"name"`
	Status     string     `json:"status"`
	DatasetID  int64      `json:"dataset_id"`
	Dataset    string     `json:"dataset"`
	Conditions []string   `json:"conditions"`
	TotalTasks int        `json:"total_tasks"`
	Results    int        `json:"results"`
	Errors     int        `json:"errors"`
	CostUSD    float64    `json:"cost_usd"`
	CreatedAt  time.Time  `json:"created_at"`
	StartedAt  *time.Time `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at"`
}

// apiRuns handles GET /api/runs: every run, newest first; ?limit=N and
// ?offset=M give a page of them.
func (s *Server) apiRuns(c echo.Context) error {
	ctx := c.Request().Context()
	limit, err := queryCount(c, "limit")
	if err != nil {
		return err
	}
	offset, err := queryCount(c, "offset")
	if err != nil {
		return err
	}
	if limit == 0 {
		return s.streamRuns(c, offset)
	}
	list, err := tally.Of(s.db).RunPage(ctx, offset, limit)
	if err != nil {
		return err
	}
	if err := tally.Of(s.db).NameConditions(ctx, list); err != nil {
		return err
	}
	out := []RunJSON{}
	for _, r := range list {
		out = append(out, runJSON(r))
	}
	return c.JSON(http.StatusOK, out)
}

// runsPage is how many runs a list of every run reads at a time.
var runsPage = 500

// streamRuns sends every run from the offset-th, as apiRuns sends a page of
// them, reading and sending runsPage at a time: 30,000 runs of 20
// conditions read whole took the server from 27 to 200 MB for the 17 MB
// sent. Once the first bytes are sent a failure can only cut the list
// short, which a script reading it finds as JSON that does not end.
func (s *Server) streamRuns(c echo.Context, offset int) error {
	ctx := c.Request().Context()
	list, err := tally.Of(s.db).RunPage(ctx, offset, runsPage)
	if err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
	c.Response().WriteHeader(http.StatusOK)
	w := bufio.NewWriterSize(c.Response(), 32<<10)
	w.WriteByte('[')
	for first := true; len(list) > 0; {
		if err := tally.Of(s.db).NameConditions(ctx, list); err != nil {
			return err
		}
		for _, r := range list {
			b, err := json.Marshal(runJSON(r))
			if err != nil {
				return err
			}
			if !first {
				w.WriteByte(',')
			}
			first = false
			w.Write(b)
		}
		if len(list) < runsPage {
			break
		}
		if list, err = tally.Of(s.db).RunsBefore(ctx, list[len(list)-1].ID, runsPage); err != nil {
			return err
		}
	}
	w.WriteString("]\n") // as c.JSON ends
	return w.Flush()
}

// runJSON is a run as the API lists it.
func runJSON(r tally.RunSummary) RunJSON {
	return RunJSON{
		ID:         r.ID,
		Name:       r.Name,
		Status:     string(r.Status),
		DatasetID:  r.DatasetID,
		Dataset:    r.DatasetName,
		Conditions: append([]string{}, r.ConditionNames...),
		TotalTasks: r.TotalTasks,
		Results:    r.Done,
		Errors:     r.Errors,
		CostUSD:    r.CostUSD,
		CreatedAt:  r.CreatedAt,
		StartedAt:  r.StartedAt,
		FinishedAt: r.FinishedAt,
	}
}

// queryCount reads a query parameter that counts: 0 when it is absent.
func queryCount(c echo.Context, name string) (int, error) {
	v := c.QueryParam(name)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, assay.Errorf(assay.EINVALID, "%s %q: want a whole number, 0 or more", name, v)
	}
	return n, nil
}

// apiRun handles GET /api/runs/:id: the run's summary, as `assay run --json`
// prints it, and while it executes the processes executing it (on this
// server or another on the same database).
func (s *Server) apiRun(c echo.Context) error {
	sc, err := s.scope(c)
	if err != nil {
		return err
	}
	r, err := s.model.Report(c.Request().Context(), sc)
	if err != nil {
		return err
	}
	out := struct {
		*report.Summary
		Executors []store.Executor `json:"executors,omitempty"`
	}{Summary: currentSummary(r.Summary, sc.Run).Grouped()}
	if sc.Run.Status == store.RunRunning {
		if out.Executors, err = s.db.Executors(c.Request().Context(), sc.Run.ID); err != nil {
			return err
		}
	}
	return c.JSON(http.StatusOK, out)
}

// currentSummary is a copy of a report's summary, which the server keeps
// and may have computed a moment ago (a poll of a large running run's, a
// second ago at most), with its run's name, status and message as read now.
func currentSummary(sum *report.Summary, run *store.Run) *report.Summary {
	c := *sum
	c.Name, c.Status, c.Message = run.Name, run.Status, run.Message
	return &c
}

// apiCancelRun handles POST /api/runs/:id/cancel: stops the run and answers
// its summary. Cancelling a run that has ended changes nothing.
// apiRetryErrors handles POST /api/runs/:id/retry-errors: 202 with the number
// of failed tasks done again, in the background.
func (s *Server) apiRetryErrors(c echo.Context) error {
	run, err := s.pathRun(c)
	if err != nil {
		return err
	}
	r, err := s.runner.RetryFailed(c.Request().Context(), run.ID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, map[string]any{"run_id": run.ID, "retrying": r.Tasks, "rejudging": r.Rejudge})
}

func (s *Server) apiCancelRun(c echo.Context) error {
	ctx := c.Request().Context()
	run, err := s.pathRun(c)
	if err != nil {
		return err
	}
	if err := s.runner.Cancel(ctx, run.ID); err != nil {
		return err
	}
	sum, err := report.Summarize(ctx, s.db, run.ID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, sum)
}
