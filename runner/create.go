package runner

import (
	"context"
	"slices"

	"assay"
	"assay/config"
	"assay/store"
)

// Create stores a pending run of cfg over a dataset and conditions, with a
// frozen snapshot of the config (no secrets, ${ENV} references kept), the
// evaluators chosen for the dataset's kind, and the price table as it is now.
// It does not start the run.
func (m *Manager) Create(ctx context.Context, cfg *config.Config, datasetID int64, conditions []assay.Condition) (*store.Run, error) {
	return m.create(ctx, cfg, datasetID, conditions, 0)
}

// create is Create; a run judging again the answers of run rejudgedFrom
// (not 0) calls no agent, and only its judges are checked.
func (m *Manager) create(ctx context.Context, cfg *config.Config, datasetID int64, conditions []assay.Condition, rejudgedFrom int64) (*store.Run, error) {
	ds, err := m.db.Dataset(ctx, datasetID)
	if err != nil {
		return nil, err
	}
	if len(conditions) == 0 {
		return nil, assay.Errorf(assay.EINVALID, "conditions: choose at least one")
	}
	if err := cfg.Validate(); err != nil {
		return nil, assay.Errorf(assay.EINVALID, "%s", err)
	}
	if err := checkJudgeKeysKept(cfg, m.opts.Getenv); err != nil {
		return nil, err
	}
	if rejudgedFrom == 0 {
		if err := checkAgent(cfg, conditions); err != nil {
			return nil, err
		}
	}
	spec, err := m.frozen(ctx, cfg, ds.Kind, conditions, rejudgedFrom != 0)
	if err != nil {
		return nil, err
	}
	if rejudgedFrom == 0 {
		conditions = byModel(conditions, spec.Agent.Models)
	}
	if err := checkStop(spec, len(conditions)); err != nil {
		return nil, err
	}
	reps := max(spec.Execution.NumRepetitions, 1)
	tasks := taskCount(ds.Samples, len(conditions), reps)
	if err := bounded(tasks, reps, spec.Execution.MaxConcurrent); err != nil {
		return nil, err
	}
	run := &store.Run{
		Name:         spec.Name,
		DatasetID:    ds.ID,
		Config:       spec,
		Conditions:   conditions,
		Repetitions:  reps,
		TotalTasks:   tasks,
		BudgetUSD:    spec.BudgetUSD,
		RejudgedFrom: rejudgedFrom,
	}
	if err := m.db.CreateLeasedRun(ctx, run, &m.holder, m.opts.LeaseTTL); err != nil {
		return nil, err
	}
	return run, nil
}

// checkAgent checks what the agent needs: its guards under the conditions,
// and Claude Code's command line.
func checkAgent(cfg *config.Config, conditions []assay.Condition) error {
	if err := checkGuards(cfg.Agent, conditions); err != nil {
		return err
	}
	if cfg.Agent.Type == config.AgentClaudeCode {
		if _, err := claudeCodeArgv(cfg.Agent); err != nil {
			return err
		}
	}
	return nil
}

// frozen is the config a run keeps: its snapshot with the evaluators for
// the dataset's kind and the prices as they are now, checked against this
// process's variables (only the judges' for a run judging answers again),
// Vertex AI and the budget.
func (m *Manager) frozen(ctx context.Context, cfg *config.Config, kind assay.Kind, conditions []assay.Condition, judgesOnly bool) (*config.Config, error) {
	spec, err := snapshot(cfg)
	if err != nil {
		return nil, err
	}
	spec.Evaluators = cfg.EvaluatorsFor(kind)
	if len(spec.Evaluators) > 0 || len(spec.Assertions) == 0 {
		if err := config.CheckEvaluators(spec.Evaluators, kind); err != nil {
			return nil, err
		}
	}
	unset := m.UnsetVariables(spec, spec.Evaluators, conditions)
	if judgesOnly {
		unset = judgesUnset(unset)
	}
	if len(unset) > 0 {
		return nil, unsetError(unset)
	}
	if err := m.checkVertex(ctx, spec, slices.ContainsFunc(spec.Evaluators, config.Evaluator.UsesJudge)); err != nil {
		return nil, err
	}
	spec.Agent.Passed = m.ClaudeCodePassed(spec)
	stored, err := m.db.Prices(ctx)
	if err != nil {
		return nil, err
	}
	spec.Prices = PriceTable(stored, cfg.Prices)
	if !judgesOnly {
		if err := checkPriced(spec, kind); err != nil {
			return nil, err
		}
	}
	return spec, nil
}

// snapshot returns the copy of cfg that a run keeps: every value written
// as a ${...} reference is a reference again, and no secret is in it.
func snapshot(cfg *config.Config) (*config.Config, error) {
	raw, err := cfg.Redacted()
	if err != nil {
		return nil, err
	}
	return config.Stored(raw)
}

// byModel makes a run's conditions of a run over several models: each
// condition as each model answers it, named "condition · model", in
// condition then model order. With one model the conditions stay as they are.
func byModel(conditions []assay.Condition, models []config.AgentModel) []assay.Condition {
	if len(models) == 0 {
		return conditions
	}
	var out []assay.Condition
	for _, c := range conditions {
		for _, m := range models {
			cm := c
			cm.Name, cm.Base, cm.Model = ModelCondition(c.Name, m.Name), c.Name, m.Name
			out = append(out, cm)
		}
	}
	return out
}

// ModelCondition names a condition as one model answers it.
func ModelCondition(condition, model string) string { return condition + " · " + model }
