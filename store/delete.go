package store

import (
	"context"
	"fmt"
)

// DeleteRun deletes a run that is not under way, with its results,
// judgements, scores, review verdicts, share links and lease, in one
// transaction.
func (db *DB) DeleteRun(ctx context.Context, id int64) (results int, err error) {
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	var status RunStatus
	if err := tx.QueryRowContext(ctx, `SELECT status FROM runs WHERE id = ?`, id).Scan(&status); err != nil {
		return 0, fmt.Errorf("run %d: %w", id, ErrNotFound)
	}
	if !status.Finished() {
		return 0, Errorf(ECONFLICT, "Run %d is %s: cancel it before deleting it.", id, status)
	}
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM results WHERE run_id = ?`, id).Scan(&results); err != nil {
		return 0, fmt.Errorf("delete run: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM runs WHERE id = ?`, id); err != nil {
		return 0, fmt.Errorf("delete run: %w", err)
	}
	return results, tx.Commit()
}

// DeleteDataset deletes a dataset and its samples in one transaction. A
// dataset that runs use is refused unless withRuns, which deletes those runs
// (none may be under way) with it.
func (db *DB) DeleteDataset(ctx context.Context, id int64, withRuns bool) (runs int, err error) {
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	d, err := findDataset(ctx, tx, `d.id = ?`, id)
	if err != nil {
		return 0, err
	}
	var unfinished int
	if err := tx.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(status IN (?, ?)), 0) FROM runs WHERE dataset_id = ?`,
		RunPending, RunRunning, id).Scan(&runs, &unfinished); err != nil {
		return 0, fmt.Errorf("delete dataset: %w", err)
	}
	switch {
	case runs > 0 && !withRuns:
		return runs, Errorf(ECONFLICT, "%d runs use dataset %q: delete them with it, or delete them first.", runs, d.Name)
	case unfinished > 0:
		return runs, Errorf(ECONFLICT, "%d runs of dataset %q are under way: cancel them first.", unfinished, d.Name)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM runs WHERE dataset_id = ?`, id); err != nil {
		return 0, fmt.Errorf("delete dataset's runs: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM datasets WHERE id = ?`, id); err != nil {
		return 0, fmt.Errorf("delete dataset: %w", err)
	}
	return runs, tx.Commit()
}

// ClearFailedTasks deletes the results of a run's tasks that failed, with
// anything hanging from them, and sets the run pending, in one transaction:
// executing it again does those tasks and only those. The run must be over.
func (db *DB) ClearFailedTasks(ctx context.Context, runID int64) (int, error) {
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	var status RunStatus
	if err := tx.QueryRowContext(ctx, `SELECT status FROM runs WHERE id = ?`, runID).Scan(&status); err != nil {
		return 0, fmt.Errorf("run %d: %w", runID, ErrNotFound)
	}
	if !status.Finished() {
		return 0, Errorf(ECONFLICT, "Run %d is %s: its failed tasks can be retried once it is over.", runID, status)
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM results WHERE run_id = ? AND error != ''`, runID)
	if err != nil {
		return 0, fmt.Errorf("clear failed tasks: %w", err)
	}
	n, _ := res.RowsAffected()
	if n == 0 {
		return 0, Errorf(EINVALID, "Run %d has no failed task to retry.", runID)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE runs SET status = ?, error = '', finished_at = NULL, headline = '',
		results_count = results_count - ? WHERE id = ?`, RunPending, n, runID); err != nil {
		return 0, fmt.Errorf("clear failed tasks: %w", err)
	}
	if err := rebuildAggregates(ctx, tx, runID); err != nil {
		return 0, err
	}
	return int(n), tx.Commit()
}
