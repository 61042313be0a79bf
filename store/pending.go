package store

import (
	"context"
	"fmt"
)

// Pending is the work a run has done for tasks whose results are not
// committed: by task, then by part ("answer", or a judge call's key), the
// JSON the runner wrote.
type Pending map[TaskKey]map[string][]byte

// SavePending keeps one part of a task's unfinished work, replacing what
// was kept under that part.
func (db *DB) SavePending(ctx context.Context, runID int64, k TaskKey, part string, body []byte) error {
	err := db.commit(ctx, func(ctx context.Context, tx writer) error {
		_, err := tx.exec(ctx, qSavePending, runID, k.SampleRow, k.Condition, k.Repetition, part, string(body))
		return err
	})
	if err != nil {
		return fmt.Errorf("save pending work: %w", err)
	}
	return nil
}

// PendingWork reads the unfinished work of a run's tasks.
func (db *DB) PendingWork(ctx context.Context, runID int64) (Pending, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT sample_id, condition, repetition, part, body FROM pending_work WHERE run_id = ?`, runID)
	if err != nil {
		return nil, fmt.Errorf("pending work: %w", err)
	}
	defer rows.Close()
	out := Pending{}
	for rows.Next() {
		var k TaskKey
		var part, body string
		if err := rows.Scan(&k.SampleRow, &k.Condition, &k.Repetition, &part, &body); err != nil {
			return nil, fmt.Errorf("pending work: %w", err)
		}
		if out[k] == nil {
			out[k] = map[string][]byte{}
		}
		out[k][part] = []byte(body)
	}
	return out, rows.Err()
}

const qSavePending = `INSERT INTO pending_work (run_id, sample_id, condition, repetition, part, body)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (run_id, sample_id, condition, repetition, part) DO UPDATE SET body = excluded.body`
