package runner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"assay"
	"assay/config"
	"assay/store"
)

// Rejudge stores a pending run that judges a finished run's answers again
// with the judge keys of a judge file (config.ParseJudge): the same
// dataset, conditions and repetitions, and every other setting its
// source's. It shares the source's answers and calls no agent: each task
// takes its answer from the source run (an answer that failed there fails
// alike) and makes only the judge calls. It does not start the run.
func (m *Manager) Rejudge(ctx context.Context, sourceID int64, judge *config.Config, keys []string) (*store.Run, error) {
	src, cfg, err := m.rejudgeConfig(ctx, sourceID, judge, keys)
	if err != nil {
		return nil, err
	}
	return m.create(ctx, cfg, src.DatasetID, src.Conditions, sourceID)
}

// RejudgeEstimate forecasts the judge calls and cost of judging a run's
// answers again (Rejudge), storing nothing.
func (m *Manager) RejudgeEstimate(ctx context.Context, sourceID int64, judge *config.Config, keys []string) (Estimate, error) {
	src, cfg, err := m.rejudgeConfig(ctx, sourceID, judge, keys)
	if err != nil {
		return Estimate{}, err
	}
	ds, err := m.db.Dataset(ctx, src.DatasetID)
	if err != nil {
		return Estimate{}, err
	}
	stored, err := m.db.Prices(ctx)
	if err != nil {
		return Estimate{}, err
	}
	var readErr error
	e := EstimateJudging(cfg, ds.Kind, m.db.AllSamples(ctx, ds.ID, &readErr), src.Conditions, PriceTable(stored, cfg.Prices))
	return e, readErr
}

// rejudgeConfig is the finished source run and the config of a run
// judging its answers again with the judge file's keys.
func (m *Manager) rejudgeConfig(ctx context.Context, sourceID int64, judge *config.Config, keys []string) (*store.Run, *config.Config, error) {
	src, err := m.db.Run(ctx, sourceID)
	if err != nil {
		return nil, nil, err
	}
	if !src.Status.Finished() {
		return nil, nil, assay.Errorf(assay.ECONFLICT, "Run %d is %s: its answers can be judged again once it is over.", sourceID, src.Status)
	}
	if len(keys) == 0 {
		return nil, nil, assay.Errorf(assay.EINVALID, "The judge file sets none of %s.", strings.Join(config.JudgeKeys, ", "))
	}
	cfg, err := src.Config.WithJudge(judge, keys)
	if err != nil {
		return nil, nil, err
	}
	cfg.Name = src.Name + " judged again"
	if !slices.ContainsFunc(cfg.EvaluatorsFor(m.kindOf(ctx, src)), config.Evaluator.UsesJudge) && len(cfg.Assertions) == 0 {
		return nil, nil, assay.Errorf(assay.EINVALID, "The run's evaluators call no judge: judging its answers again would change nothing.")
	}
	return src, cfg, nil
}

// kindOf is the kind of a run's dataset; "" when it cannot be read.
func (m *Manager) kindOf(ctx context.Context, run *store.Run) assay.Kind {
	ds, err := m.db.Dataset(ctx, run.DatasetID)
	if err != nil {
		return ""
	}
	return ds.Kind
}

// judgesUnset keeps the variables a run that calls no agent misses: those
// a judge or a reference outside the agent and the conditions' MCP
// servers needs.
func judgesUnset(unset []Unset) []Unset {
	var out []Unset
	for _, u := range unset {
		var where []string
		for _, w := range u.Where {
			if !strings.HasPrefix(w, "agent.") && !strings.HasPrefix(w, "condition ") {
				where = append(where, w)
			}
		}
		if len(where) > 0 {
			u.Where = where
			out = append(out, u)
		}
	}
	return out
}

// sourceAnswer is the answer the source run of a run judging answers again
// gave a task, as this run's result: its agent's cost is the source's,
// not this run's. An answer the source has not is an error.
func (ex *execution) sourceAnswer(ctx context.Context, t task) (*store.Result, error) {
	results, err := ex.m.db.SampleResults(ctx, ex.run.RejudgedFrom, t.sample.ID)
	if err != nil {
		return nil, err
	}
	res := &store.Result{RunID: ex.run.ID, SampleRow: t.sample.ID, Condition: t.condition.Name, Repetition: t.repetition}
	i := slices.IndexFunc(results, func(r store.Result) bool { return r.Condition == t.condition.Name && r.Repetition == t.repetition })
	if i < 0 {
		res.Error, res.ErrorKind = fmt.Sprintf("run %d has no answer to this task to judge again", ex.run.RejudgedFrom), store.ErrorOther
		return res, nil
	}
	*res = results[i]
	res.ID, res.RunID, res.Judgements = 0, ex.run.ID, nil
	res.CostUSD, res.CostSource = 0, ""
	return res, nil
}

// notTheAgents keeps of a config's resolution errors those that are not
// the agent's or its MCP servers': what a run that calls no agent needs.
func notTheAgents(err error) error {
	var keep []error
	for _, e := range leaves(err) {
		var f *config.FieldError
		if errors.As(e, &f) && (strings.HasPrefix(f.Key, "agent.") || strings.HasPrefix(f.Key, "mcp_servers")) {
			continue
		}
		keep = append(keep, e)
	}
	return errors.Join(keep...)
}
