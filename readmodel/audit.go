package readmodel

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"assay/config"
	"assay/runner/audit"
	"assay/store"
	"assay/templates"
)

// auditView is the run's latest judge audit; nil for a run without a judge.
func (r *Viewed) auditView(ctx context.Context, db *store.DB) (*templates.AuditView, error) {
	if cfg := r.Scope.Run.Config; cfg == nil || !slices.ContainsFunc(cfg.Evaluators, config.Evaluator.UsesJudge) {
		return nil, nil
	}
	v := &templates.AuditView{}
	b, err := db.LatestAudit(ctx, r.Scope.Run.ID)
	if err != nil || b == nil {
		return v, err
	}
	var res audit.Result
	if err := json.Unmarshal(b, &res); err != nil {
		return nil, fmt.Errorf("run %d: its audit: %w", r.Scope.Run.ID, err)
	}
	v.Lines, v.At, v.Calls, v.Cost = audit.Lines(&res), templates.When(res.At), res.Calls, fmt.Sprintf("$%.4f", res.CostUSD)
	if !res.Estimate.Priced {
		v.Cost = "the judge has no price"
	}
	return v, nil
}
