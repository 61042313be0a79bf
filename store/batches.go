package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"
)

// RunBatch is a batch of a run's calls at a provider's batch API.
type RunBatch struct {
	ID         int64
	RunID      int64
	Provider   string   // openai or anthropic
	ProviderID string   // the provider's id of the batch
	Endpoint   string   // the calls' address and model
	Status     string   // as the provider last said: validating, in_progress, completed, …
	Lines      []string // the lines' ids
	CreatedAt  time.Time
	EndedAt    *time.Time
}

// AddRunBatch keeps a batch the provider has just made.
func (db *DB) AddRunBatch(ctx context.Context, b *RunBatch) error {
	lines, err := json.Marshal(b.Lines)
	if err != nil {
		return err
	}
	now := db.nowText()
	if err := db.write.QueryRowContext(ctx, `INSERT INTO run_batches (run_id, provider, provider_id, endpoint, status, lines, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`, b.RunID, b.Provider, b.ProviderID, b.Endpoint, b.Status, string(lines), now).Scan(&b.ID); err != nil {
		return fmt.Errorf("run %d: keep batch %s: %w", b.RunID, b.ProviderID, err)
	}
	b.CreatedAt = parseTime(now)
	return nil
}

// SetRunBatchStatus records how a batch stands; an ended one, when it ended.
func (db *DB) SetRunBatchStatus(ctx context.Context, id int64, status string, ended bool) error {
	var endedAt any
	if ended {
		endedAt = db.nowText()
	}
	if _, err := db.write.ExecContext(ctx, `UPDATE run_batches SET status = ?, ended_at = coalesce(ended_at, ?) WHERE id = ?`,
		status, endedAt, id); err != nil {
		return fmt.Errorf("batch %d: %w", id, err)
	}
	return nil
}

// RunBatches are a run's batches, oldest first.
func (db *DB) RunBatches(ctx context.Context, runID int64) ([]RunBatch, error) {
	var out []RunBatch
	err := EachRow(ctx, db.read, `SELECT id, provider, provider_id, endpoint, status, lines, created_at, ended_at
		FROM run_batches WHERE run_id = ? ORDER BY id`, []any{runID}, func(rows *sql.Rows) error {
		b := RunBatch{RunID: runID}
		var lines, created string
		var ended sql.NullString
		if err := rows.Scan(&b.ID, &b.Provider, &b.ProviderID, &b.Endpoint, &b.Status, &lines, &created, &ended); err != nil {
			return err
		}
		if err := json.Unmarshal([]byte(lines), &b.Lines); err != nil {
			return fmt.Errorf("batch %s's lines: %w", b.ProviderID, err)
		}
		b.CreatedAt, b.EndedAt = parseTime(created), parseTimePtr(ended)
		out = append(out, b)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("run %d's batches: %w", runID, err)
	}
	return out, nil
}

// BatchedCalls counts, by condition, the calls of a run's results — the
// agent's and its judges' — that were answered in a batch.
func (db *DB) BatchedCalls(ctx context.Context, runID int64) (map[string]int, error) {
	out := map[string]int{}
	err := EachRow(ctx, db.read, `SELECT condition, CAST(sum(n) AS BIGINT) FROM (
			SELECT r.condition, j.batched_calls AS n FROM judgements j JOIN results r ON r.id = j.result_id WHERE j.run_id = ?
			UNION ALL SELECT condition, batched_calls FROM results WHERE run_id = ?) calls
		GROUP BY condition`, []any{runID, runID}, func(rows *sql.Rows) error {
		var c string
		var n int
		err := rows.Scan(&c, &n)
		out[c] += n
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("run %d's batched calls: %w", runID, err)
	}
	return out, nil
}

// AnswersAwaiting counts a run's tasks whose answer is kept while their
// result is not saved yet: answers waiting for their judgement.
func (db *DB) AnswersAwaiting(ctx context.Context, runID int64) (int, error) {
	var n int
	if err := db.read.QueryRowContext(ctx, `SELECT count(*) FROM pending_work WHERE run_id = ? AND part = 'answer'`, runID).Scan(&n); err != nil {
		return 0, fmt.Errorf("run %d's answers awaiting judgement: %w", runID, err)
	}
	return n, nil
}

// BatchCount is a batch as a page tells it: its lines counted, not read.
type BatchCount struct {
	Provider, ProviderID, Status string
	Lines                        int
	Ended                        bool
}

// BatchCounts are a run's batches, oldest first, each with its count of
// lines: what the run's page and its report say of them, polled while it
// runs, without reading every line's id.
func (db *DB) BatchCounts(ctx context.Context, runID int64) ([]BatchCount, error) {
	var out []BatchCount
	err := EachRow(ctx, db.read, `SELECT provider, provider_id, status, json_array_length(lines), ended_at IS NOT NULL
		FROM run_batches WHERE run_id = ? ORDER BY id`, []any{runID}, func(rows *sql.Rows) error {
		var b BatchCount
		err := rows.Scan(&b.Provider, &b.ProviderID, &b.Status, &b.Lines, &b.Ended)
		out = append(out, b)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("run %d's batches: %w", runID, err)
	}
	return out, nil
}
