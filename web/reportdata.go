package web

import (
	"context"

	"assay/report"
	"assay/store"
)

// viewed is a run's report as seen through a scope — by its owner, or
// through a share link — which its views and exports render.
type viewed struct {
	*report.Report
	sc      *reportScope
	version string                               // the token of the version it was computed at
	fields  *fifo[fieldsKey, []store.SliceField] // the server's datasets' fields to slice by, when kept
}

// buildReport reads a run's scores and totals and computes its report.
func buildReport(ctx context.Context, db *store.DB, sc *reportScope, verdicts []store.Review) (*viewed, error) {
	r, err := report.BuildWith(ctx, db, sc.Run, sc.Dataset, sc.Config, sc.View, sc.Judge, verdicts)
	if err != nil {
		return nil, err
	}
	return &viewed{Report: r, sc: sc}, nil
}
