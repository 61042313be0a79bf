package store

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"sync"

	"golang.org/x/sync/errgroup"
)

// This file holds the queries of reports and exports: whole-run scans that
// read through the covering indexes of migration 0002 and join in memory.

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
	Scores     []ScoreRow              // the rows RunScores returns, in its order
	Conditions []ConditionProgress     // the rows RunProgress returns, ordered by condition
	TopErrors  map[string][]ErrorCount // by condition: the most common messages, as TopErrors gives them
}

// topErrorsShown is how many messages of each kind a report lists per condition.
const topErrorsShown = 5

// resultKey is what a score needs of its result.
type resultKey struct {
	sample     int64
	condition  string
	repetition int
}

// ReportData returns every score of a run and its per-condition totals, in
// index-only scans instead of joins over the wide rows. The scores are read
// in one transaction while the totals are read in another, side by side; a
// score is placed by the totals' results and judgements, so a score whose
// result committed between the two reads is left out, as if read a moment
// earlier, until the next read (a finished run's two reads agree).
func (db *DB) ReportData(ctx context.Context, runID int64) (*ReportData, error) {
	var raw []rawScore
	var t *totals
	out := &ReportData{}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		tx, err := db.beginRead(gctx)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		raw, err = readScores(gctx, tx, runID)
		return err
	})
	g.Go(func() error {
		tx, err := db.beginRead(gctx)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if t, err = reportTotals(gctx, tx, runID); err != nil {
			return err
		}
		if out.Models, err = reportModels(gctx, tx, runID); err != nil {
			return err
		}
		out.TopErrors, err = topErrors(gctx, tx, runID, topErrorsShown)
		return err
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}
	out.Scores, out.Conditions = placeScores(raw, t.results, t.evaluators), t.conditions()
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
	t, err := reportTotals(ctx, tx, runID)
	if err != nil {
		return nil, err
	}
	return t.conditions(), nil
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

// totals are a run's counts per condition, with what the scan of scores
// needs to place each score.
type totals struct {
	results    map[int64]resultKey    // result id → its task
	evaluators map[int64]judgementKey // judgement id → its evaluator and judge repetition
	byName     map[string]*ConditionProgress
}

// reportTotals counts a run's results, judgements and tool calls per condition.
func reportTotals(ctx context.Context, tx querier, runID int64) (*totals, error) {
	results, byName, err := reportResults(ctx, tx, runID)
	if err != nil {
		return nil, err
	}
	evaluators, err := reportJudgements(ctx, tx, runID, results, byName)
	if err != nil {
		return nil, err
	}
	if err := reportToolCalls(ctx, tx, runID, byName); err != nil {
		return nil, err
	}
	if err := reportRetries(ctx, tx, runID, byName); err != nil {
		return nil, err
	}
	if err := reportErrorKinds(ctx, tx, runID, results, byName); err != nil {
		return nil, err
	}
	return &totals{results: results, evaluators: evaluators, byName: byName}, nil
}

// conditions lists the totals by condition name.
func (t *totals) conditions() []ConditionProgress {
	var out []ConditionProgress
	for _, name := range slices.Sorted(maps.Keys(t.byName)) {
		out = append(out, *t.byName[name])
	}
	return out
}

func reportResults(ctx context.Context, tx querier, runID int64) (map[int64]resultKey, map[string]*ConditionProgress, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id, sample_id, condition, repetition, error != '', tokens_in,
		tokens_out, cost_usd, latency_ms FROM results INDEXED BY results_report WHERE run_id = ?`, runID)
	if err != nil {
		return nil, nil, fmt.Errorf("report results: %w", err)
	}
	defer rows.Close()
	results := map[int64]resultKey{}
	totals := map[string]*ConditionProgress{}
	latency := map[string]int64{}
	for rows.Next() {
		var id, lat int64
		var k resultKey
		var failed bool
		var tin, tout int
		var cost float64
		if err := rows.Scan(&id, &k.sample, &k.condition, &k.repetition, &failed, &tin, &tout, &cost, &lat); err != nil {
			return nil, nil, fmt.Errorf("report results: %w", err)
		}
		results[id] = k
		t := totals[k.condition]
		if t == nil {
			t = &ConditionProgress{Condition: k.condition}
			totals[k.condition] = t
		}
		t.Done++
		t.Errors += b2i(failed)
		t.TokensIn += tin
		t.TokensOut += tout
		t.CostUSD += cost
		latency[k.condition] += lat
	}
	for name, t := range totals {
		t.LatencyMS = float64(latency[name]) / float64(t.Done)
	}
	return results, totals, rows.Err()
}

// reportJudgements adds the judges' tokens, cost and errors to the totals and
// returns the evaluator and judge repetition of each judgement.
func reportJudgements(ctx context.Context, tx querier, runID int64, results map[int64]resultKey,
	totals map[string]*ConditionProgress) (map[int64]judgementKey, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id, result_id, evaluator, judge_repetition, judge, error != '', tokens_in, tokens_out, cost_usd
		FROM judgements INDEXED BY judgements_report WHERE run_id = ?`, runID)
	if err != nil {
		return nil, fmt.Errorf("report judgements: %w", err)
	}
	defer rows.Close()
	evaluators := map[int64]judgementKey{}
	names := map[string]string{} // one copy of each evaluator's name
	for rows.Next() {
		var id, resultID int64
		var evaluator, judge sql.RawBytes
		var slot int
		var failed bool
		var tin, tout int
		var cost float64
		if err := rows.Scan(&id, &resultID, &evaluator, &slot, &judge, &failed, &tin, &tout, &cost); err != nil {
			return nil, fmt.Errorf("report judgements: %w", err)
		}
		r, ok := results[resultID]
		if !ok {
			continue // saved after the scan of results
		}
		name, seen := names[string(evaluator)]
		if !seen {
			name = string(evaluator)
			names[name] = name
		}
		judgeName, seen := names[string(judge)]
		if !seen {
			judgeName = string(judge)
			names[judgeName] = judgeName
		}
		index, rep := fromSlot(slot)
		evaluators[id] = judgementKey{name, judgeName, index, rep}
		t := totals[r.condition]
		t.JudgeErrors += b2i(failed)
		t.TokensIn += tin
		t.TokensOut += tout
		t.CostUSD += cost
	}
	return evaluators, rows.Err()
}

// rawScore is a score as its row holds it, before it is placed.
type rawScore struct {
	id, result, judgement int64
	metric                string
	value                 float64
}

// readScores reads a run's scores as their rows hold them.
func readScores(ctx context.Context, tx querier, runID int64) ([]rawScore, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id, result_id, judgement_id, metric, value
		FROM scores INDEXED BY scores_report WHERE run_id = ?`, runID)
	if err != nil {
		return nil, fmt.Errorf("report scores: %w", err)
	}
	defer rows.Close()
	var out []rawScore
	metrics := map[string]string{} // one copy of each metric name
	for rows.Next() {
		var s rawScore
		var metric sql.RawBytes
		if err := rows.Scan(&s.id, &s.result, &s.judgement, &metric, &s.value); err != nil {
			return nil, fmt.Errorf("report scores: %w", err)
		}
		name, seen := metrics[string(metric)]
		if !seen {
			name = string(metric)
			metrics[name] = name
		}
		s.metric = name
		out = append(out, s)
	}
	return out, rows.Err()
}

// placeScores gives each score its task and judgement, leaving out those
// whose result or judgement the totals have not seen.
func placeScores(raw []rawScore, results map[int64]resultKey, evaluators map[int64]judgementKey) []ScoreRow {
	// Scores come in result order; they are bucketed by condition and metric,
	// then each bucket is sorted by sample: cheaper than one sort of them all.
	// The two halves are placed side by side, then joined bucket by bucket.
	half := len(raw) / 2
	var second map[scoreBucket][]ScoreRow
	done := make(chan struct{})
	go func() {
		second = bucketScores(raw[half:], results, evaluators)
		close(done)
	}()
	buckets := bucketScores(raw[:half], results, evaluators)
	<-done
	for k, rows := range second {
		buckets[k] = append(buckets[k], rows...)
	}
	return flatten(buckets)
}

// bucketScores places scores in buckets by condition, evaluator and metric.
func bucketScores(raw []rawScore, results map[int64]resultKey, evaluators map[int64]judgementKey) map[scoreBucket][]ScoreRow {
	buckets := map[scoreBucket][]ScoreRow{}
	for _, s := range raw {
		id, value, name := s.id, s.value, s.metric
		r, ok := results[s.result]
		j, judged := evaluators[s.judgement]
		if !ok || !judged {
			continue
		}
		k := scoreBucket{r.condition, j.evaluator, name}
		buckets[k] = append(buckets[k], ScoreRow{
			ID:              id,
			SampleRow:       r.sample,
			Condition:       r.condition,
			Repetition:      r.repetition,
			JudgeRepetition: j.rep,
			Judge:           j.judge,
			JudgeIndex:      j.index,
			Evaluator:       j.evaluator,
			Metric:          name,
			Value:           value,
		})
	}
	return buckets
}

// judgementKey is what a score needs of its judgement.
type judgementKey struct {
	evaluator string
	judge     string // the panel judge's name
	index     int    // its place in the panel
	rep       int    // judge repetition
}

// scoreBucket holds the scores of one metric under one condition.
type scoreBucket struct{ condition, evaluator, metric string }

// flatten lists the buckets' scores in RunScores' order: condition,
// evaluator, metric, then sample and repetition.
func flatten(buckets map[scoreBucket][]ScoreRow) []ScoreRow {
	keys := slices.SortedFunc(maps.Keys(buckets), func(a, b scoreBucket) int {
		return cmp.Or(cmp.Compare(a.condition, b.condition), cmp.Compare(a.evaluator, b.evaluator), cmp.Compare(a.metric, b.metric))
	})
	n := 0
	for _, b := range buckets {
		n += len(b)
	}
	// The buckets are sorted side by side, then laid end to end.
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for _, b := range buckets {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			slices.SortFunc(b, func(x, y ScoreRow) int {
				return cmp.Or(cmp.Compare(x.SampleRow, y.SampleRow), cmp.Compare(x.Repetition, y.Repetition),
					cmp.Compare(x.JudgeIndex, y.JudgeIndex), cmp.Compare(x.JudgeRepetition, y.JudgeRepetition))
			})
		})
	}
	wg.Wait()
	out := make([]ScoreRow, 0, n)
	for _, k := range keys {
		out = append(out, buckets[k]...)
	}
	return out
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// DatasetRuns lists the runs of a dataset, newest first, with their conditions.
func (db *DB) DatasetRuns(ctx context.Context, datasetID int64) ([]Run, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+runColumns+` FROM runs r WHERE r.dataset_id = ? ORDER BY r.id DESC`,
		datasetID)
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
	conds, err := db.runConditions(ctx, `WHERE run_id IN (SELECT id FROM runs WHERE dataset_id = ?)`, datasetID)
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i].Conditions = conds[out[i].ID]
	}
	return out, nil
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

// ResultsVersion counts a run's results and gives the id of its latest, as
// the run keeps them (migration 0019). Results and their scores are only
// ever added, or cleared for a retry, which changes the count: an unchanged
// version means unchanged scores.
func (db *DB) ResultsVersion(ctx context.Context, runID int64) (count int, last int64, err error) {
	err = db.read.QueryRowContext(ctx, `SELECT results_count, results_last FROM runs WHERE id = ?`, runID).Scan(&count, &last)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, fmt.Errorf("run %d: %w", runID, ErrNotFound)
	} else if err != nil {
		return 0, 0, fmt.Errorf("results version: %w", err)
	}
	return count, last, nil
}

// reportToolCalls adds each condition's MCP tool calls and failed calls,
// reading only the results that have any.
func reportToolCalls(ctx context.Context, tx querier, runID int64, totals map[string]*ConditionProgress) error {
	rows, err := tx.QueryContext(ctx, `SELECT condition, sum(json_array_length(tool_calls)),
		sum((SELECT count(*) FROM json_each(tool_calls) WHERE json_extract(value, '$.is_error')))
		FROM results INDEXED BY results_with_tools WHERE run_id = ? AND tool_calls != '[]' GROUP BY condition`, runID)
	if err != nil {
		return fmt.Errorf("report tool calls: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var calls, failed int
		if err := rows.Scan(&name, &calls, &failed); err != nil {
			return fmt.Errorf("report tool calls: %w", err)
		}
		if t := totals[name]; t != nil {
			t.ToolCalls, t.ToolErrors = calls, failed
		}
	}
	return rows.Err()
}

// reportRetries counts each condition's results that were retried after a
// failure, reading only those.
func reportRetries(ctx context.Context, tx querier, runID int64, totals map[string]*ConditionProgress) error {
	rows, err := tx.QueryContext(ctx, `SELECT condition, count(*) FROM results INDEXED BY results_retried
		WHERE run_id = ? AND retries != '[]' GROUP BY condition`, runID)
	if err != nil {
		return fmt.Errorf("report retries: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var n int
		if err := rows.Scan(&name, &n); err != nil {
			return fmt.Errorf("report retries: %w", err)
		}
		if t := totals[name]; t != nil {
			t.Retries = n
		}
	}
	return rows.Err()
}

// reportErrorKinds counts each condition's agent and judge errors by kind,
// reading only the failed rows.
func reportErrorKinds(ctx context.Context, tx querier, runID int64, results map[int64]resultKey,
	totals map[string]*ConditionProgress) error {
	rows, err := tx.QueryContext(ctx, `SELECT condition, error_kind, count(*) FROM results INDEXED BY results_errors
		WHERE run_id = ? AND error != '' GROUP BY condition, error_kind`, runID)
	if err != nil {
		return fmt.Errorf("report error kinds: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var kind ErrorKind
		var n int
		if err := rows.Scan(&name, &kind, &n); err != nil {
			return fmt.Errorf("report error kinds: %w", err)
		}
		if t := totals[name]; t != nil {
			t.ErrorKinds = addKind(t.ErrorKinds, kind, n)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("report error kinds: %w", err)
	}
	jrows, err := tx.QueryContext(ctx, `SELECT result_id, error_kind FROM judgements INDEXED BY judgements_errors
		WHERE run_id = ? AND error != ''`, runID)
	if err != nil {
		return fmt.Errorf("report judge error kinds: %w", err)
	}
	defer jrows.Close()
	for jrows.Next() {
		var resultID int64
		var kind ErrorKind
		if err := jrows.Scan(&resultID, &kind); err != nil {
			return fmt.Errorf("report judge error kinds: %w", err)
		}
		if r, ok := results[resultID]; ok {
			t := totals[r.condition]
			t.JudgeErrorKinds = addKind(t.JudgeErrorKinds, kind, 1)
		}
	}
	return jrows.Err()
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

// reportModels counts a run's results by the model that answered and the
// source of their cost.
func reportModels(ctx context.Context, tx querier, runID int64) ([]ModelUse, error) {
	rows, err := tx.QueryContext(ctx, `SELECT model, cost_source, count(*) FROM results INDEXED BY results_models
		WHERE run_id = ? GROUP BY model, cost_source ORDER BY model, cost_source`, runID)
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
