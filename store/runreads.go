package store

import (
	"context"
	"fmt"
	"math"
)

// DatasetRuns lists the runs of a dataset, newest first, up to limit of
// them (every one when limit is 0), without their conditions (see
// ConditionNames): with them, a dataset's 3,000 runs of twenty conditions
// took 0.4 s to read for each of its runs' pages.
func (db *DB) DatasetRuns(ctx context.Context, datasetID int64, limit int) ([]Run, error) {
	if limit <= 0 {
		limit = math.MaxInt64
	}
	rows, err := db.read.QueryContext(ctx, `SELECT `+RunColumns+` FROM runs r WHERE r.dataset_id = ? AND r.status NOT IN `+HiddenRuns+`
		ORDER BY r.id DESC LIMIT ?`, datasetID, limit)
	if err != nil {
		return nil, fmt.Errorf("dataset runs: %w", err)
	}
	defer rows.Close()
	var out []Run
	for rows.Next() {
		r, err := ScanRun(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("dataset runs: %w", err)
	}
	return out, nil
}

// DatasetRunCount counts the runs of a dataset.
func (db *DB) DatasetRunCount(ctx context.Context, datasetID int64) (int, error) {
	var n int
	if err := db.read.QueryRowContext(ctx, `SELECT count(*) FROM runs WHERE dataset_id = ? AND status NOT IN `+HiddenRuns, datasetID).Scan(&n); err != nil {
		return 0, fmt.Errorf("dataset runs: %w", err)
	}
	return n, nil
}

// SampleIDs maps the row ids of a dataset's samples to the dataset's own ids.
func (db *DB) SampleIDs(ctx context.Context, datasetID int64) (map[int64]string, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT id, sample_id FROM samples WHERE dataset_id = ?`, datasetID)
	if err != nil {
		return nil, fmt.Errorf("sample names: %w", err)
	}
	defer rows.Close()
	out := map[int64]string{}
	for rows.Next() {
		var id int64
		var name string
		if err := rows.Scan(&id, &name); err != nil {
			return nil, fmt.Errorf("sample names: %w", err)
		}
		out[id] = name
	}
	return out, rows.Err()
}

// AnswerCost is what one answered result cost and took: its task, the
// agent's cost and its latency.
type AnswerCost struct {
	SampleRow int64
	Condition string
	CostUSD   float64
	LatencyMS int64
}

// AnswerCosts lists the cost and latency of each of a run's results that
// has no error, through the covering index of its report scan.
func (db *DB) AnswerCosts(ctx context.Context, runID int64) ([]AnswerCost, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT sample_id, condition, cost_usd, latency_ms
		FROM results INDEXED BY results_report WHERE run_id = ? AND error = ''`, runID)
	if err != nil {
		return nil, fmt.Errorf("answer costs: %w", err)
	}
	defer rows.Close()
	var out []AnswerCost
	for rows.Next() {
		var a AnswerCost
		if err := rows.Scan(&a.SampleRow, &a.Condition, &a.CostUSD, &a.LatencyMS); err != nil {
			return nil, fmt.Errorf("answer costs: %w", err)
		}
		out = append(out, a)
	}
	return out, rows.Err()
}
