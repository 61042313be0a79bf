package readmodel

import (
	"context"

	"assay/report"
	"assay/store"
)

// Viewed is a run's report as seen through a scope — by its owner, or
// through a share link — which its views and exports render.
type Viewed struct {
	*report.Report
	Scope   *Scope
	Version string                               // the token of the version it was computed at
	Fields  *FIFO[FieldsKey, []store.SliceField] // the server's datasets' fields to slice by, when kept
}

// BuildReport reads a run's scores and totals and computes its report.
func BuildReport(ctx context.Context, db *store.DB, sc *Scope, verdicts []store.Review) (*Viewed, error) {
	r, err := report.BuildWith(ctx, db, sc.Run, sc.Dataset, sc.Run.Config, sc.View, sc.Judge, verdicts)
	if err != nil {
		return nil, err
	}
	return &Viewed{Report: r, Scope: sc}, nil
}

// In returns the report as seen through another scope (owner or share link).
func (r *Viewed) In(sc *Scope) *Viewed {
	c := *r
	c.Scope = sc
	return &c
}
