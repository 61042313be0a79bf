package readmodel

import (
	"context"
	"fmt"

	"assay/report"
	"assay/store"
)

// Scope is the run a report page shows, reached by its owner
// (/runs/:id/...) or through a share link (/r/:token/...).
type Scope struct {
	Run     *store.Run
	Dataset *store.Dataset
	// Shared is true through a share link: the page is read-only, shows no
	// forms, settings, key variable names or links outside the report.
	Shared bool
	// Base prefixes every URL of the report: "/runs/7", "/r/<token>" or
	// "/rv/<token>".
	Base string
	// View is whether the report applies reviews to the scores.
	View report.View
	// Judge is the panel judge whose scores alone the report shows; "" for
	// the whole panel.
	Judge string
	// ReviewLink is the review link the page was reached through: its
	// samples and sample pages, with review controls and nothing else.
	ReviewLink *store.ReviewLink
}

// OwnerScope is the scope of a report read by its owner: the run, its dataset
// and the base /runs/:id.
func OwnerScope(ctx context.Context, db *store.DB, runID int64) (*Scope, error) {
	run, err := db.Run(ctx, runID)
	if err != nil {
		return nil, err
	}
	return RunScope(ctx, db, run)
}

// RunScope is the owner's scope of a run already read.
func RunScope(ctx context.Context, db *store.DB, run *store.Run) (*Scope, error) {
	ds, err := db.Dataset(ctx, run.DatasetID)
	if err != nil {
		return nil, err
	}
	return &Scope{Run: run, Dataset: ds, Base: fmt.Sprintf("/runs/%d", run.ID)}, nil
}
