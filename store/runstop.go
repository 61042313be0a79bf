package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"assay"
)

// RunStop is how a run with a stopping rule stopped before its plan's end.
type RunStop struct {
	Samples    int       `json:"samples"`    // samples done, whole
	DecidedAt  int       `json:"decided_at"` // samples the rule had seen when it held (0: not kept)
	OfSamples  int       `json:"of_samples"` // samples in the plan
	Reason     string    `json:"reason"`
	SavedTasks int       `json:"saved_tasks"` // answers not asked for
	SavedCalls int       `json:"saved_calls"` // their model calls, at the run's calls per answer so far
	SavedUSD   float64   `json:"saved_usd"`   // their estimated cost; 0 when unpriced
	At         time.Time `json:"at"`
	// Extended: the run was extended since toward its plan's end, and
	// its rule no longer stops it.
	Extended bool `json:"extended"`
}

// SaveRunStop records that a run stopped early, replacing an earlier stop.
func (db *DB) SaveRunStop(ctx context.Context, runID int64, s RunStop) error {
	_, err := db.write.ExecContext(ctx, `INSERT INTO run_stops (run_id, samples, of_samples, reason, saved_tasks, saved_calls, saved_usd, stopped_at, decided_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (run_id) DO UPDATE SET samples = excluded.samples, of_samples = excluded.of_samples,
		reason = excluded.reason, saved_tasks = excluded.saved_tasks, saved_calls = excluded.saved_calls, saved_usd = excluded.saved_usd, stopped_at = excluded.stopped_at,
		decided_at = excluded.decided_at, extended = 0`,
		runID, s.Samples, s.OfSamples, s.Reason, s.SavedTasks, s.SavedCalls, s.SavedUSD, db.nowText(), s.DecidedAt)
	if err != nil {
		return fmt.Errorf("run %d: save its stop: %w", runID, err)
	}
	return nil
}

// RunStopOf is how a run stopped early; nil when it did not.
func (db *DB) RunStopOf(ctx context.Context, runID int64) (*RunStop, error) {
	var s RunStop
	var at string
	err := db.read.QueryRowContext(ctx, `SELECT samples, of_samples, reason, saved_tasks, saved_calls, saved_usd, stopped_at, extended, decided_at
		FROM run_stops WHERE run_id = ?`, runID).Scan(&s.Samples, &s.OfSamples, &s.Reason, &s.SavedTasks, &s.SavedCalls, &s.SavedUSD, &at, &s.Extended, &s.DecidedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("run %d: its stop: %w", runID, err)
	}
	s.At = parseTime(at)
	return &s, nil
}

// ExtendRun reopens a run that stopped early, toward its plan's end: it
// is pending again, and its rule no longer stops it. A run that did not
// stop early is a conflict.
func (db *DB) ExtendRun(ctx context.Context, runID int64) error {
	tx, err := db.BeginWrite(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `UPDATE run_stops SET extended = 1 WHERE run_id = ? AND extended = 0`, runID)
	if err != nil {
		return fmt.Errorf("run %d: extend: %w", runID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return assay.Errorf(assay.ECONFLICT, "Run %d did not stop early: there is nothing to extend.", runID)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE runs SET status = ?, error = '', finished_at = NULL, headline = '' WHERE id = ?`, RunPending, runID); err != nil {
		return fmt.Errorf("run %d: extend: %w", runID, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("run %d: extend: %w", runID, err)
	}
	return nil
}

// RunCalls is how many model calls a run's saved results made: the
// agent's (each turn and retry) and its judges' (deterministic checks
// make none).
func (db *DB) RunCalls(ctx context.Context, runID int64) (int, error) {
	var agent, judges int
	err := db.read.QueryRowContext(ctx, `SELECT coalesce(sum(attempts), 0) FROM results WHERE run_id = ?`, runID).Scan(&agent)
	if err == nil {
		err = db.read.QueryRowContext(ctx, `SELECT coalesce(sum(j.attempts), 0) FROM judgements j JOIN results r ON r.id = j.result_id
			WHERE r.run_id = ? AND j.seed IS NOT NULL`, runID).Scan(&judges)
	}
	if err != nil {
		return 0, fmt.Errorf("run %d: its calls: %w", runID, err)
	}
	return agent + judges, nil
}
