package tally

import (
	"assay"
	"assay/store"
	"context"
	"fmt"
	"strings"
)

// RunSummary is a run with its progress, for lists.
type RunSummary struct {
	store.Run // without its Conditions: ConditionNames names them
	// ConditionNames are the run's conditions, in order. A list of runs
	// reads their names, not their snapshots: decoding the snapshots of 300
	// runs of 20 conditions cost a runs list 0.2 s.
	ConditionNames []string
	DatasetName    string
	Done           int
	Errors         int
	CostUSD        float64
}

// Runs lists runs, newest first, with their conditions and progress.
func (t *Tally) Runs(ctx context.Context) ([]RunSummary, error) {
	out, err := t.RunList(ctx)
	if err != nil {
		return nil, err
	}
	return out, t.NameConditions(ctx, out)
}

// LatestRun returns the summary of the run launched last, with its
// conditions' names, or ErrNotFound.
func (t *Tally) LatestRun(ctx context.Context) (*RunSummary, error) {
	out, err := t.RunPage(ctx, 0, 1)
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("latest run: %w", assay.ErrNotFound)
	}
	return &out[0], t.NameConditions(ctx, out)
}

// RunList is Runs without the conditions' names, which NameConditions adds
// to the runs a page shows.
func (t *Tally) RunList(ctx context.Context) ([]RunSummary, error) {
	return t.runSummaries(ctx, `WHERE r.status NOT IN `+store.HiddenRuns+` ORDER BY r.id DESC`)
}

// RunPage is RunList's limit runs from the offset-th. It reads those
// alone: a team's CI adds a run at every change, and reading 30,000 runs
// for a page of them took 0.3-0.4 s.
func (t *Tally) RunPage(ctx context.Context, offset, limit int) ([]RunSummary, error) {
	return t.runSummaries(ctx, `WHERE r.status NOT IN `+store.HiddenRuns+` ORDER BY r.id DESC LIMIT ? OFFSET ?`, limit, offset)
}

// RunsBefore is RunList's limit runs after the run with that id (whose
// ids are lower): the pages of a list read one after the other, which runs
// added meanwhile do not shift.
func (t *Tally) RunsBefore(ctx context.Context, id int64, limit int) ([]RunSummary, error) {
	return t.runSummaries(ctx, `WHERE r.status NOT IN `+store.HiddenRuns+` AND r.id < ? ORDER BY r.id DESC LIMIT ?`, id, limit)
}

// RunsByID is RunList's runs with these ids.
func (t *Tally) RunsByID(ctx context.Context, ids []int64) ([]RunSummary, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	return t.runSummaries(ctx, `WHERE r.status NOT IN `+store.HiddenRuns+` AND r.id IN (?`+
		strings.Repeat(", ?", len(ids)-1)+`) ORDER BY r.id DESC`, args...)
}

// qRunSummaries selects what a list shows of runs, each run's totals
// looked up on its own: for a page's runs alone, and for every run as
// fast as summing every run's totals at once.
const qRunSummaries = `SELECT ` + store.RunColumns + `, d.name,
		(SELECT coalesce(sum(done), 0) FROM condition_totals WHERE run_id = r.id),
		(SELECT coalesce(sum(errors), 0) FROM condition_totals WHERE run_id = r.id),
		(SELECT coalesce(sum(cost_usd), 0) FROM condition_totals WHERE run_id = r.id)
		FROM runs r JOIN datasets d ON d.id = r.dataset_id`

// runSummaries reads the summaries of the runs a WHERE clause picks, in
// its order.
func (t *Tally) runSummaries(ctx context.Context, where string, args ...any) ([]RunSummary, error) {
	rows, err := t.db.Read().QueryContext(ctx, qRunSummaries+` `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	defer rows.Close()
	var out []RunSummary
	for rows.Next() {
		var s RunSummary
		r, err := store.ScanRun(rows, &s.DatasetName, &s.Done, &s.Errors, &s.CostUSD)
		if err != nil {
			return nil, err
		}
		s.Run = *r
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	return out, nil
}

// NameConditions sets the conditions' names of the runs listed.
func (t *Tally) NameConditions(ctx context.Context, list []RunSummary) error {
	if len(list) == 0 {
		return nil
	}
	// The runs of a page are a range of ids; a search's may be all of them.
	low, high := list[0].ID, list[0].ID
	for _, r := range list {
		low, high = min(low, r.ID), max(high, r.ID)
	}
	names, err := t.db.ConditionNames(ctx, low, high)
	if err != nil {
		return err
	}
	for i := range list {
		list[i].ConditionNames = names[list[i].ID]
	}
	return nil
}
