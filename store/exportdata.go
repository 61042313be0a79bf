package store

import (
	"context"
	"fmt"
)

// exportBatch is how many samples' results EachResult reads at once; it
// holds two batches: the one fn is given and the next, read meanwhile.
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
	// The next batch is read while fn is given this one's results.
	type batch struct {
		results []Result
		err     error
	}
	ctx, cancel := context.WithCancel(ctx)
	next := make(chan batch, 1)
	go func() {
		defer close(next)
		for start := 0; start < len(samples); start += exportBatch {
			end := min(start+exportBatch, len(samples)) - 1
			results, err := db.queryResults(ctx, lean, `WHERE r.run_id = ? AND r.sample_id BETWEEN ? AND ?`,
				runID, samples[start], samples[end])
			select {
			case next <- batch{results, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	defer func() {
		cancel()
		for range next { // the reader has stopped once next is closed
		}
	}()
	for b := range next {
		if b.err != nil {
			return b.err
		}
		for i := range b.results {
			if err := fn(&b.results[i]); err != nil {
				return err
			}
		}
	}
	return ctx.Err() // the reader stops early only when the caller's context ends
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
