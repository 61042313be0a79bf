package web

import (
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"assay"
	"assay/config"
	"assay/store"
)

// maxJudgeFile bounds a judge file sent to be judged again.
const maxJudgeFile = 1 << 20

// apiRejudge handles POST /api/runs/:id/rejudge with the judge keys of a
// run file as JSON ({"judge": {…}, "evaluators": […], …}): a new run that
// judges the run's answers again, started at once; 202 {"run_id"}.
func (s *Server) apiRejudge(c echo.Context) error {
	run, err := s.pathRun(c)
	if err != nil {
		return err
	}
	body, err := io.ReadAll(io.LimitReader(c.Request().Body, maxJudgeFile+1))
	if err != nil {
		return err
	}
	if len(body) > maxJudgeFile {
		return assay.Errorf(assay.EINVALID, "The judge keys are over %d KiB.", maxJudgeFile>>10)
	}
	id, err := s.rejudge(c, run.ID, body, "request body")
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, map[string]any{"run_id": id, "url": origin(c) + fmt.Sprintf("/runs/%d", id)})
}

// rejudge makes and starts the run judging a run's answers again with the
// judge keys in data (YAML or JSON), named name in errors.
func (s *Server) rejudge(c echo.Context, runID int64, data []byte, name string) (int64, error) {
	ctx := c.Request().Context()
	judge, keys, err := config.ParseJudge(data, name, s.runner.Getenv, s.runner.SavedRubrics(ctx))
	if err != nil {
		return 0, assay.Errorf(assay.EINVALID, "%v", err)
	}
	run, err := s.runner.Rejudge(ctx, runID, judge, keys)
	if err != nil {
		return 0, err
	}
	if err := s.runner.Start(run.ID); err != nil {
		return 0, fmt.Errorf("start run %d: %w", run.ID, err)
	}
	s.log.Info("run judged again", "run_id", run.ID, "rejudged_from", runID, "tasks", run.TotalTasks, "by", store.Actor(ctx))
	return run.ID, nil
}

// rejudgeForm handles POST /runs/:id/rejudge from the report's form: the
// judge keys as YAML; to the new run's page.
func (s *Server) rejudgeForm(c echo.Context) error {
	run, err := s.pathRun(c)
	if err != nil {
		return err
	}
	id, err := s.rejudge(c, run.ID, []byte(c.FormValue("judge")), "judge keys")
	if err != nil {
		setFlash(c, "error", assay.ErrorMessage(err))
		return c.Redirect(http.StatusSeeOther, fmt.Sprintf("/runs/%d#rejudge", run.ID))
	}
	setFlash(c, "ok", fmt.Sprintf("Run %d judges the answers of run %d again: no agent is called.", id, run.ID))
	return c.Redirect(http.StatusSeeOther, fmt.Sprintf("/runs/%d", id))
}

// judgeKeysOf is a run's judge as the judge keys of a run file, for the
// form that judges its answers again to start from.
func judgeKeysOf(cfg *config.Config) string {
	if cfg == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString("judge:\n")
	fmt.Fprintf(&b, "  model: %s\n", cfg.Judge.Model)
	if cfg.Judge.BaseURL != "" {
		fmt.Fprintf(&b, "  base_url: %s\n", cfg.Judge.BaseURL)
	}
	if cfg.Judge.APIKeyEnv != "" {
		fmt.Fprintf(&b, "  api_key_env: %s\n", cfg.Judge.APIKeyEnv)
	}
	return b.String()
}
