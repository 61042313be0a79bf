package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"

	"assay"
)

// This file holds the queries of reports: the run's aggregates (migration
// 0020, kept by the transactions that store results), read in one snapshot,
// and the few scans of failed rows and models that go beside them.

// ModelUse is how many results of a run one model answered, and where
// their cost came from.
type ModelUse struct {
	Model   string
	Source  CostSource
	Results int
}

// ReportData is what a run's report is computed from.
type ReportData struct {
	Models     []ModelUse              // by model, then source
	Scores     []MetricScores          // by condition, evaluator and metric
	Conditions []ConditionProgress     // the rows RunProgress returns, ordered by condition
	TopErrors  map[string][]ErrorCount // by condition: the most common messages, as TopErrors gives them
}

// topErrorsShown is how many messages of each kind a report lists per condition.
const topErrorsShown = 5

// ReportData returns every score of a run and its per-condition totals,
// read from its aggregates in one snapshot: one row per sample and
// condition and one per condition, however many repetitions and judges.
func (db *DB) ReportData(ctx context.Context, runID int64) (*ReportData, error) {
	defer db.index.waitedFor()()
	tx, err := db.beginRead(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	out := &ReportData{}
	if out.Conditions, err = conditionTotals(ctx, tx, runID); err != nil {
		return nil, err
	}
	if out.Models, err = reportModels(ctx, tx, runID); err != nil {
		return nil, err
	}
	if out.TopErrors, err = topErrors(ctx, tx, runID, topErrorsShown); err != nil {
		return nil, err
	}
	if out.Scores, err = db.reportScores(ctx, tx, runID); err != nil {
		return nil, err
	}
	return out, nil
}

// RunProgress returns a run's totals per condition, ordered by name: the
// figures ReportData gives, counted the same way.
func (db *DB) RunProgress(ctx context.Context, runID int64) ([]ConditionProgress, error) {
	tx, err := db.beginRead(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	return conditionTotals(ctx, tx, runID)
}

// RunCost is the recorded cost of a run's agent and judge calls: the sum of
// its conditions' costs in RunProgress.
func (db *DB) RunCost(ctx context.Context, runID int64) (float64, error) {
	progress, err := db.RunProgress(ctx, runID)
	if err != nil {
		return 0, err
	}
	var cost float64
	for _, p := range progress {
		cost += p.CostUSD
	}
	return cost, nil
}

// conditionTotals reads a run's totals per condition, ordered by name, with
// their errors by kind.
func conditionTotals(ctx context.Context, tx querier, runID int64) ([]ConditionProgress, error) {
	var out []ConditionProgress
	err := eachRow(ctx, tx, `SELECT condition, done, errors, judge_errors, tokens_in, tokens_out, cost_usd, latency_ms,
		retries, tool_calls, tool_errors FROM condition_totals WHERE run_id = ? ORDER BY condition`, []any{runID},
		func(rows *sql.Rows) error {
			var p ConditionProgress
			var latency int64
			if err := rows.Scan(&p.Condition, &p.Done, &p.Errors, &p.JudgeErrors, &p.TokensIn, &p.TokensOut, &p.CostUSD,
				&latency, &p.Retries, &p.ToolCalls, &p.ToolErrors); err != nil {
				return err
			}
			if p.Done > 0 {
				p.LatencyMS = float64(latency) / float64(p.Done)
			}
			out = append(out, p)
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("condition totals: %w", err)
	}
	byName := map[string]*ConditionProgress{}
	for i := range out {
		byName[out[i].Condition] = &out[i]
	}
	if err := reportErrorKinds(ctx, tx, runID, byName); err != nil {
		return nil, err
	}
	return out, nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// DatasetRuns lists the runs of a dataset, newest first, up to limit of
// them (every one when limit is 0), without their conditions (see
// ConditionNames): with them, a dataset's 3,000 runs of twenty conditions
// took 0.4 s to read for each of its runs' pages.
func (db *DB) DatasetRuns(ctx context.Context, datasetID int64, limit int) ([]Run, error) {
	if limit <= 0 {
		limit = math.MaxInt64
	}
	rows, err := db.read.QueryContext(ctx, `SELECT `+runColumns+` FROM runs r WHERE r.dataset_id = ? AND r.status NOT IN `+hiddenRuns+`
		ORDER BY r.id DESC LIMIT ?`, datasetID, limit)
	if err != nil {
		return nil, fmt.Errorf("dataset runs: %w", err)
	}
	defer rows.Close()
	var out []Run
	for rows.Next() {
		r, err := scanRun(rows)
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
	if err := db.read.QueryRowContext(ctx, `SELECT count(*) FROM runs WHERE dataset_id = ? AND status NOT IN `+hiddenRuns, datasetID).Scan(&n); err != nil {
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

// ResultsVersion is the version of a run's results, as the run keeps it
// (migrations 0019 and 0034). Results and their scores are only ever
// added, which changes the count and the last id, or cleared for a retry,
// which changes Cleared (a result stored next may take a cleared one's
// id, giving back the count and the last id of before): an unchanged
// version means unchanged scores.
type ResultsVersion struct {
	Count   int   // results
	Last    int64 // the id of the latest
	Cleared int   // times its failed tasks were cleared
}

// ResultsVersion reads the version of a run's results.
func (db *DB) ResultsVersion(ctx context.Context, runID int64) (ResultsVersion, error) {
	var v ResultsVersion
	err := db.read.QueryRowContext(ctx, `SELECT results_count, results_last, results_cleared FROM runs WHERE id = ?`, runID).
		Scan(&v.Count, &v.Last, &v.Cleared)
	if errors.Is(err, sql.ErrNoRows) {
		return v, fmt.Errorf("run %d: %w", runID, assay.ErrNotFound)
	} else if err != nil {
		return v, fmt.Errorf("results version: %w", err)
	}
	return v, nil
}

// reportErrorKinds counts each condition's agent and judge errors by kind,
// reading only the failed rows.
func reportErrorKinds(ctx context.Context, tx querier, runID int64, totals map[string]*ConditionProgress) error {
	for _, q := range []struct {
		judge bool
		sql   string
	}{
		{false, `SELECT condition, error_kind, count(*) FROM results INDEXED BY results_errors
			WHERE run_id = ? AND error != '' GROUP BY condition, error_kind`},
		{true, `SELECT r.condition, j.error_kind, count(*) FROM judgements j INDEXED BY judgements_errors
			JOIN results r ON r.id = j.result_id WHERE j.run_id = ? AND j.error != '' GROUP BY r.condition, j.error_kind`},
	} {
		err := eachRow(ctx, tx, q.sql, []any{runID}, func(rows *sql.Rows) error {
			var name string
			var kind ErrorKind
			var n int
			if err := rows.Scan(&name, &kind, &n); err != nil {
				return err
			}
			if t := totals[name]; t != nil && q.judge {
				t.JudgeErrorKinds = addKind(t.JudgeErrorKinds, kind, n)
			} else if t != nil {
				t.ErrorKinds = addKind(t.ErrorKinds, kind, n)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("report error kinds: %w", err)
		}
	}
	return nil
}

// addKind counts n errors of a kind; an error stored before kinds were is other.
func addKind(m map[ErrorKind]int, kind ErrorKind, n int) map[ErrorKind]int {
	if m == nil {
		m = map[ErrorKind]int{}
	}
	if kind == "" {
		kind = ErrorOther
	}
	m[kind] += n
	return m
}

// reportModels reads a run's results counted by the model that answered
// and the source of their cost.
func reportModels(ctx context.Context, tx querier, runID int64) ([]ModelUse, error) {
	rows, err := tx.QueryContext(ctx, `SELECT model, cost_source, results FROM model_totals
		WHERE run_id = ? ORDER BY model, cost_source`, runID)
	if err != nil {
		return nil, fmt.Errorf("report models: %w", err)
	}
	defer rows.Close()
	var out []ModelUse
	for rows.Next() {
		var m ModelUse
		if err := rows.Scan(&m.Model, &m.Source, &m.Results); err != nil {
			return nil, fmt.Errorf("report models: %w", err)
		}
		out = append(out, m)
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
