package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"assay"
)

// ClearFailedTasks deletes the results of a run's tasks that failed, with
// anything hanging from them, and sets the run pending, in one transaction:
// executing it again does those tasks and only those. The run must be over.
//
// The run's aggregates lose the deleted results without reading the rest
// of the run (dropFromAggregates): computed again whole, they took 8 s and
// 320 MB for 100 failed tasks of a 150,000-result run, every write of the
// database waiting meanwhile.
func (db *DB) ClearFailedTasks(ctx context.Context, runID int64) (int, error) {
	n, _, err := db.ClearFailed(ctx, runID, nil)
	return n, err
}

// ClearFailed is ClearFailedTasks, and with keep also clears the tasks
// whose answer was judged with an error: keep gives, for each such result,
// the pending work to keep for its task (its answer, the judge calls that
// succeeded; see KeepPending), so that only the failed judge calls are made
// again. It returns the tasks cleared for their agent's error, then those
// cleared for a judge's.
func (db *DB) ClearFailed(ctx context.Context, runID int64, keep func(Result) map[string][]byte) (tasks, judged int, err error) {
	var rejudge []Result
	if keep != nil {
		// The run is over and its lease held: nothing writes it meanwhile.
		rejudge, err = db.queryResults(ctx, false, `WHERE r.run_id = ? AND r.error = '' AND EXISTS
			(SELECT 1 FROM judgements j WHERE j.result_id = r.id AND j.error != '')`, runID)
		if err != nil {
			return 0, 0, err
		}
	}
	ids := make([]int64, len(rejudge))
	for i, r := range rejudge {
		ids[i] = r.ID
	}
	list, _ := json.Marshal(ids)
	tx, err := db.BeginWrite(ctx)
	if err != nil {
		return 0, 0, err
	}
	defer tx.Rollback()
	if err := runOver(ctx, tx, runID); err != nil {
		return 0, 0, err
	}
	failed, err := StoredResults(ctx, tx, runID, `AND (r.error != '' OR r.id IN (SELECT value FROM json_each(?)))`, string(list))
	if err != nil {
		return 0, 0, fmt.Errorf("clear failed tasks: %w", err)
	}
	if len(failed) == 0 {
		if keep != nil {
			return 0, 0, assay.Errorf(assay.EINVALID, "Run %d has no failed task or judge call to retry.", runID)
		}
		return 0, 0, assay.Errorf(assay.EINVALID, "Run %d has no failed task to retry.", runID)
	}
	if err := keepForJudging(ctx, tx, runID, rejudge, keep); err != nil {
		return 0, 0, err
	}
	if err := deleteResults(ctx, tx, failed); err != nil {
		return 0, 0, fmt.Errorf("clear failed tasks: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE runs SET status = ?, error = '', finished_at = NULL, headline = '',
		results_cleared = results_cleared + 1 WHERE id = ?`, RunPending, runID); err != nil {
		return 0, 0, fmt.Errorf("clear failed tasks: %w", err)
	}
	if db.tallies != nil {
		if err := db.tallies.Removed(ctx, tx, runID, failed); err != nil {
			return 0, 0, fmt.Errorf("clear failed tasks: %w", err)
		}
	}
	return len(failed) - len(rejudge), len(rejudge), tx.Commit()
}

// runOver refuses a run that is not over: its failed tasks are retried
// once it is.
func runOver(ctx context.Context, tx *sql.Tx, runID int64) error {
	var status RunStatus
	if err := tx.QueryRowContext(ctx, `SELECT status FROM runs WHERE id = ?`, runID).Scan(&status); errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("run %d: %w", runID, assay.ErrNotFound)
	} else if err != nil {
		return fmt.Errorf("clear failed tasks of run %d: %w", runID, err)
	}
	if !status.Finished() {
		return assay.Errorf(assay.ECONFLICT, "Run %d is %s: its failed tasks can be retried once it is over.", runID, status)
	}
	return nil
}

// keepForJudging keeps what keep gives of each result to judge again as
// the task's pending parts: its answer is not asked for again.
func keepForJudging(ctx context.Context, tx *sql.Tx, runID int64, rejudge []Result, keep func(Result) map[string][]byte) error {
	for _, r := range rejudge {
		for part, body := range keep(r) {
			if _, err := tx.ExecContext(ctx, qSavePending, runID, r.SampleRow, r.Condition, r.Repetition, part, string(body)); err != nil {
				return fmt.Errorf("clear failed judge calls: %w", err)
			}
		}
	}
	return nil
}

// deleteResults deletes results, with what hangs from them, a few hundred
// per statement: a statement in a transaction keeps the pages it changes
// in memory until it ends, in case it has to be undone alone, and a single
// statement deleting 10,000 results of a 150,000-result run held 300 MB
// (the pages of their judgements and scores, spread through the tables).
func deleteResults(ctx context.Context, tx *sql.Tx, results []Result) error {
	const per = 256
	ids := make([]int64, 0, per)
	for start := 0; start < len(results); start += per {
		ids = ids[:0]
		for i := start; i < min(start+per, len(results)); i++ {
			ids = append(ids, results[i].ID)
		}
		list, _ := json.Marshal(ids)
		if _, err := tx.ExecContext(ctx, `DELETE FROM results WHERE id IN (SELECT value FROM json_each(?))`, string(list)); err != nil {
			return err
		}
	}
	return nil
}
