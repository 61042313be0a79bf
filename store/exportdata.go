package store

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
)

// exportBatch is how many samples' results EachResult reads at once, and
// exportAhead how many batches it holds: the one fn is given and those
// read meanwhile. What they hold is doubled by the collector's headroom:
// batches of 25 samples hold less than batches of 100 at the same rate,
// and smaller ones are slower and hold no less.
const (
	exportBatch = 25
	exportAhead = 3
)

// EachResult calls fn with every result of a run, its judgements and scores
// attached, in task order (sample, condition, repetition). It reads the
// results of a few hundred samples at a time, so that exporting a large run
// never holds it whole in memory. An error from fn stops the walk and is
// returned as is.
func (db *DB) EachResult(ctx context.Context, runID int64, fn func(*Result) error) error {
	return db.eachResult(ctx, runID, false, fn)
}

// EachScored is EachResult with only what a table of scores writes: each
// result's task, error, tokens, cost, latency, attempts and tool calls,
// each judgement's evaluator, judge, repetition, error and claims, and
// every score. The rest is left empty: the response, the judgements' raw
// answers and details, the models, retries, cached tokens, seeds and the
// judgements' own costs. Each column read costs the driver a lock: reading
// 14 fewer of a result's 51 (with its judgement's and three scores') took
// a tenth off a CSV export's CPU (150,000 results on one core: 3.14–3.48 s,
// then 2.87–3.04).
func (db *DB) EachScored(ctx context.Context, runID int64, fn func(*Result) error) error {
	return db.eachResult(ctx, runID, true, fn)
}

func (db *DB) eachResult(ctx context.Context, runID int64, lean bool, fn func(*Result) error) error {
	samples, err := db.resultSamples(ctx, runID)
	if err != nil {
		return err
	}
	// Readers, one per core, read the batches ahead while fn is given the
	// results of the current one, in order; at most exportAhead batches
	// are held.
	type batch struct {
		results []Result
		err     error
	}
	n := (len(samples) + exportBatch - 1) / exportBatch
	batches := make([]chan batch, n)
	for i := range batches {
		batches[i] = make(chan batch, 1)
	}
	ctx, cancel := context.WithCancel(ctx)
	ahead := make(chan struct{}, exportAhead)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), n) {
		wg.Go(func() {
			for {
				select {
				case ahead <- struct{}{}:
				case <-ctx.Done():
					return
				}
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				start, end := i*exportBatch, min((i+1)*exportBatch, len(samples))-1
				results, err := db.queryResults(ctx, lean, `WHERE r.run_id = ? AND r.sample_id BETWEEN ? AND ?`,
					runID, samples[start], samples[end])
				batches[i] <- batch{results, err}
			}
		})
	}
	defer func() {
		cancel()
		wg.Wait()
	}()
	for _, c := range batches {
		var b batch
		select {
		case b = <-c:
		case <-ctx.Done():
			return ctx.Err()
		}
		if b.err != nil {
			return b.err
		}
		for i := range b.results {
			if err := fn(&b.results[i]); err != nil {
				return err
			}
		}
		<-ahead // this batch is done with: a reader may read another
	}
	return nil
}

// ResultSamples counts the samples a run has results for.
func (db *DB) ResultSamples(ctx context.Context, runID int64) (int, error) {
	ids, err := db.resultSamples(ctx, runID)
	return len(ids), err
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
