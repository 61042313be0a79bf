package tally

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"assay"
	"assay/store"
)

// This file holds the queries of reports: the run's aggregates (migration
// 0020, kept by the transactions that store results), read in one snapshot,
// and the few scans of failed rows and models that go beside them.

// ModelUse is how many results of a run one model answered, and where
// their cost came from.
type ModelUse struct {
	Model   string
	Source  store.CostSource
	Results int
}

// ReportData is what a run's report is computed from.
type ReportData struct {
	Models     []ModelUse                    // by model, then source
	Scores     []MetricScores                // by condition, evaluator and metric
	Conditions []store.ConditionProgress     // the rows RunProgress returns, ordered by condition
	TopErrors  map[string][]store.ErrorCount // by condition: the most common messages, as TopErrors gives them
}

// topErrorsShown is how many messages of each kind a report lists per condition.
const topErrorsShown = 5

// ReportData returns every score of a run and its per-condition totals,
// read from its aggregates in one snapshot: one row per sample and
// condition and one per condition, however many repetitions and judges.
func (t *Tally) ReportData(ctx context.Context, runID int64) (*ReportData, error) {
	defer t.index.waitedFor()()
	tx, err := t.db.BeginRead(ctx)
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
	if out.TopErrors, err = store.TopErrorsIn(ctx, tx, runID, topErrorsShown); err != nil {
		return nil, err
	}
	if out.Scores, err = t.reportScores(ctx, tx, runID); err != nil {
		return nil, err
	}
	return out, nil
}

// RunProgress returns a run's totals per condition, ordered by name: the
// figures ReportData gives, counted the same way.
func (t *Tally) RunProgress(ctx context.Context, runID int64) ([]store.ConditionProgress, error) {
	tx, err := t.db.BeginRead(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	return conditionTotals(ctx, tx, runID)
}

// RunCost is the recorded cost of a run's agent and judge calls: the sum of
// its conditions' costs in RunProgress.
func (t *Tally) RunCost(ctx context.Context, runID int64) (float64, error) {
	progress, err := t.RunProgress(ctx, runID)
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
func conditionTotals(ctx context.Context, tx store.Querier, runID int64) ([]store.ConditionProgress, error) {
	var out []store.ConditionProgress
	err := store.EachRow(ctx, tx, `SELECT condition, done, errors, judge_errors, tokens_in, tokens_out, cost_usd, latency_ms,
		retries, tool_calls, tool_errors FROM condition_totals WHERE run_id = ? ORDER BY condition`, []any{runID},
		func(rows *sql.Rows) error {
			var p store.ConditionProgress
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
	byName := map[string]*store.ConditionProgress{}
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

// reportErrorKinds counts each condition's agent and judge errors by kind,
// reading only the failed rows.
func reportErrorKinds(ctx context.Context, tx store.Querier, runID int64, totals map[string]*store.ConditionProgress) error {
	for _, q := range []struct {
		judge bool
		sql   string
	}{
		{false, `SELECT condition, error_kind, count(*) FROM results INDEXED BY results_errors
			WHERE run_id = ? AND error != '' GROUP BY condition, error_kind`},
		{true, `SELECT r.condition, j.error_kind, count(*) FROM judgements j INDEXED BY judgements_errors
			JOIN results r ON r.id = j.result_id WHERE j.run_id = ? AND j.error != '' GROUP BY r.condition, j.error_kind`},
	} {
		err := store.EachRow(ctx, tx, q.sql, []any{runID}, func(rows *sql.Rows) error {
			var name string
			var kind store.ErrorKind
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
func addKind(m map[store.ErrorKind]int, kind store.ErrorKind, n int) map[store.ErrorKind]int {
	if m == nil {
		m = map[store.ErrorKind]int{}
	}
	if kind == "" {
		kind = store.ErrorOther
	}
	m[kind] += n
	return m
}

// reportModels reads a run's results counted by the model that answered
// and the source of their cost.
func reportModels(ctx context.Context, tx store.Querier, runID int64) ([]ModelUse, error) {
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
func (t *Tally) ResultsVersion(ctx context.Context, runID int64) (ResultsVersion, error) {
	var v ResultsVersion
	err := t.db.Read().QueryRowContext(ctx, `SELECT results_count, results_last, results_cleared FROM runs WHERE id = ?`, runID).
		Scan(&v.Count, &v.Last, &v.Cleared)
	if errors.Is(err, sql.ErrNoRows) {
		return v, fmt.Errorf("run %d: %w", runID, assay.ErrNotFound)
	} else if err != nil {
		return v, fmt.Errorf("results version: %w", err)
	}
	return v, nil
}
