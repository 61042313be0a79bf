package web

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"assay"
	"assay/config"
	"assay/store"
)

// launchRequest is a run launched through the API: a stored dataset, stored
// conditions by name, and the settings a run file would hold.
type launchRequest struct {
	DatasetID  int64           `json:"dataset_id"`
	Conditions []string        `json:"conditions"`
	Run        json.RawMessage `json:"run"`
}

// apiLaunchRun handles POST /api/runs: creates a run and starts it; 201 with
// {"run_id", "total_tasks", "url"}. The settings are checked as a run file's
// are, and a run missing a variable is refused before it is stored.
func (s *Server) apiLaunchRun(c echo.Context) error {
	ctx := c.Request().Context()
	var in launchRequest
	dec := json.NewDecoder(c.Request().Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return assay.Errorf(assay.EINVALID, "The request body is not a launch: %v. Send {\"dataset_id\", \"conditions\": [names], \"run\": {run file settings}}.", err)
	}
	if _, err := s.db.Dataset(ctx, in.DatasetID); err != nil {
		return assay.Errorf(assay.EINVALID, "dataset_id: no dataset %d", in.DatasetID)
	}
	stored, err := s.db.Conditions(ctx)
	if err != nil {
		return err
	}
	byName := map[string]assay.Condition{}
	for _, c := range stored {
		byName[c.Name] = c
	}
	var conds []assay.Condition
	for i, name := range in.Conditions {
		cond, ok := byName[name]
		if !ok {
			return assay.Errorf(assay.EINVALID, "conditions[%d]: no stored condition %q", i, name)
		}
		conds = append(conds, cond)
	}
	settings := []byte(in.Run)
	if len(settings) == 0 || string(settings) == "null" {
		settings = []byte("{}")
	}
	cfg, err := config.ParseSettings(settings, "run", s.runner.Getenv, s.runner.SavedRubrics(ctx))
	if err != nil {
		return assay.Errorf(assay.EINVALID, "%v", err)
	}
	if cfg.Agent.Type.RunsProgram() && !s.cfg.AllowCommandAgents {
		return assay.Errorf(assay.EINVALID, "run.agent.type: this server does not start programs for a request; "+
			"restart it with --allow-command-agents, or run this agent from a run file with assay run.")
	}
	run, err := s.runner.Create(ctx, cfg, in.DatasetID, conds)
	if err != nil {
		return err
	}
	if err := s.runner.Start(run.ID); err != nil {
		return fmt.Errorf("start run %d: %w", run.ID, err)
	}
	s.log.Info("run launched", "run_id", run.ID, "tasks", run.TotalTasks, "by", store.Actor(ctx))
	return c.JSON(http.StatusCreated, map[string]any{"run_id": run.ID, "total_tasks": run.TotalTasks,
		"url": origin(c) + fmt.Sprintf("/runs/%d", run.ID)})
}

// apiResumeRun handles POST /api/runs/:id/resume: a cancelled, failed or
// budget-stopped run goes on from its finished tasks; 202.
func (s *Server) apiResumeRun(c echo.Context) error {
	run, err := s.pathRun(c)
	if err != nil {
		return err
	}
	if err := s.runner.Resume(c.Request().Context(), run.ID); err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, map[string]any{"run_id": run.ID, "status": store.RunPending})
}
