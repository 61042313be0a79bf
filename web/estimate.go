package web

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"assay"
	"assay/config"
	"assay/runner"
	"assay/templates"
)

// estimateRun handles POST /runs/estimate: the estimate panel for the form as it stands.
func (s *Server) estimateRun(c echo.Context) error {
	form, err := c.FormParams()
	if err != nil {
		return assay.Errorf(assay.EINVALID, "The form could not be read: %v", err)
	}
	e, err := s.estimate(c.Request().Context(), readRunForm(form))
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, templates.EstimateBody(e))
}

// estimate forecasts the run a form describes, or says what keeps it from one.
func (s *Server) estimate(ctx context.Context, f templates.RunForm) (templates.EstimateView, error) {
	spec, err := s.runSpec(ctx, f)
	if err != nil {
		if assay.ErrorCode(err) != assay.EINVALID {
			return templates.EstimateView{}, err
		}
		return templates.EstimateView{Problem: assay.ErrorMessage(err)}, nil
	}
	prices, err := s.priceTable(ctx)
	if err != nil {
		return templates.EstimateView{}, err
	}
	cfg := spec.cfg
	// The samples are read one at a time: held at once, 100,000 questions
	// took the server from 73 to 300 MB on each estimate.
	e := runner.EstimateEach(cfg, spec.dataset.Kind, s.db.AllSamples(ctx, spec.dataset.ID, &err), spec.conditions, prices)
	if err != nil {
		return templates.EstimateView{}, err
	}
	v := templates.EstimateView{
		Samples:     spec.dataset.Samples,
		Conditions:  len(spec.conditions),
		Repetitions: cfg.Execution.NumRepetitions,
		Models:      len(cfg.Agent.Models),
		Warnings:    cfg.Warnings(),
		SampleRate:  cfg.JudgeSampleRate,
		JudgeReps:   cfg.JudgeRepetitions,
		AgentCalls:  e.AgentCalls,
		JudgeCalls:  e.JudgeCalls,
		TokensIn:    e.TokensIn,
		TokensOut:   e.TokensOut,
		CostUSD:     e.CostUSD,
		LiveUSD:     e.LiveUSD,
		BatchUSD:    e.BatchUSD,
		Batched:     cfg.Batch != nil && cfg.Batch.Judge,
		Unpriced:    e.Unpriced,
		UnsetEnv:    s.unsetVariables(cfg, spec.dataset.Kind, spec.conditions),
		BudgetUSD:   cfg.BudgetUSD,
	}
	if w := cfg.StopWarning(spec.dataset.Samples); w != "" {
		v.Warnings = append(v.Warnings, w)
	}
	for _, ev := range cfg.Evaluators {
		if ev.UsesJudge() {
			v.Judges = append(v.Judges, string(ev))
		}
	}
	return v, nil
}

func (s *Server) priceTable(ctx context.Context) (map[string]config.Price, error) {
	list, err := s.db.Prices(ctx)
	if err != nil {
		return nil, err
	}
	return runner.PriceTable(list, nil), nil
}

// unsetVariables names the variables the run needs that this server's
// environment lacks, and where: the run would be refused. Values are never read out.
func (s *Server) unsetVariables(cfg *config.Config, kind assay.Kind, conditions []assay.Condition) []templates.UnsetVar {
	var out []templates.UnsetVar
	for _, u := range s.runner.UnsetVariables(cfg, cfg.EvaluatorsFor(kind), conditions) {
		out = append(out, templates.UnsetVar{Name: u.Name, Where: u.Places()})
	}
	return out
}
