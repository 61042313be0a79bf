package store

import (
	"context"
	"fmt"
)

// exportBatch is how many samples' results EachResult holds at once.
const exportBatch = 200

// EachResult calls fn with every result of a run, its judgements and scores
// attached, in task order (sample, condition, repetition). It reads the
// results of a few hundred samples at a time, so that exporting a large run
// never holds it whole in memory. An error from fn stops the walk and is
// returned as is.
func (db *DB) EachResult(ctx context.Context, runID int64, fn func(*Result) error) error {
	return db.eachResult(ctx, runID, false, fn)
}

// EachScored is EachResult without the texts a table of scores has no use
// for: each result's response, and each judgement's raw answer and detail
// are left empty (a judgement's claims and scores' reasoning stay).
func (db *DB) EachScored(ctx context.Context, runID int64, fn func(*Result) error) error {
	return db.eachResult(ctx, runID, true, fn)
}

func (db *DB) eachResult(ctx context.Context, runID int64, lean bool, fn func(*Result) error) error {
	samples, err := db.resultSamples(ctx, runID)
	if err != nil {
		return err
	}
	for start := 0; start < len(samples); start += exportBatch {
		end := min(start+exportBatch, len(samples)) - 1
		batch, err := db.queryResults(ctx, lean, `WHERE r.run_id = ? AND r.sample_id BETWEEN ? AND ?`,
			runID, samples[start], samples[end])
		if err != nil {
			return err
		}
		for i := range batch {
			if err := fn(&batch[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// resultSamples lists the row ids of the samples a run has results for, in order.
func (db *DB) resultSamples(ctx context.Context, runID int64) ([]int64, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT DISTINCT sample_id FROM results WHERE run_id = ? ORDER BY sample_id`, runID)
	if err != nil {
		return nil, fmt.Errorf("result samples: %w", err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("result samples: %w", err)
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}
