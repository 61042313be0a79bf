package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"assay"
)

// RebuildRun computes again from a run's record — its results, judgements
// and scores — everything its tallies keep of them, in one transaction
// (Tallies.Rebuild). It returns the run's results.
// A run a live process is executing is refused (ECONFLICT): its process
// keeps its own tallies as it goes.
func (db *DB) RebuildRun(ctx context.Context, runID int64) (results int, err error) {
	if l, err := db.RunLease(ctx, runID); err == nil && HolderAlive(l.Holder) {
		return 0, &assay.Error{Code: assay.ECONFLICT, Message: l.describe(runID, db.now())}
	} else if err != nil && !errors.Is(err, assay.ErrNotFound) {
		return 0, err
	}
	tx, err := db.BeginWrite(ctx)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	var status RunStatus
	if err := tx.QueryRowContext(ctx, `SELECT status FROM runs WHERE id = ? AND status NOT IN `+HiddenRuns, runID).Scan(&status); errors.Is(err, sql.ErrNoRows) {
		return 0, assay.Errorf(assay.ENOTFOUND, "run %d not found", runID)
	} else if err != nil {
		return 0, fmt.Errorf("rebuild run %d: %w", runID, err)
	}
	if db.tallies == nil {
		return 0, fmt.Errorf("rebuild run %d: the database was opened without its tallies", runID)
	}
	if err := db.tallies.Rebuild(ctx, tx, runID); err != nil {
		return 0, err
	}
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM results WHERE run_id = ?`, runID).Scan(&results); err != nil {
		return 0, fmt.Errorf("rebuild run %d: %w", runID, err)
	}
	return results, tx.Commit()
}

// RunIDs are the ids of every run stored (not those being imported or
// deleted), oldest first.
func (db *DB) RunIDs(ctx context.Context) ([]int64, error) {
	var ids []int64
	err := EachRow(ctx, db.read, `SELECT id FROM runs WHERE status NOT IN `+HiddenRuns+` ORDER BY id`, nil, func(rows *sql.Rows) error {
		var id int64
		err := rows.Scan(&id)
		ids = append(ids, id)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("runs: %w", err)
	}
	return ids, nil
}
