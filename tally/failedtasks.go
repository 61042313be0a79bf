package tally

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"assay/store"
)

// dropFromAggregates takes results just deleted out of their run's
// aggregates, leaving them what rebuildAggregates would compute from the
// results left, to the last bit, while reading only the rows the results
// were in: each sample row loses the results' lines and counts and its
// sums are added up again from the lines left (dropFromSampleRow); their
// conditions' totals and their models' counts are lessened by theirs; a
// row left with no result goes. A condition's cost is a sum of floats in
// the order stored, which a subtraction would not give back: it is added
// up again from the condition's results when a result deleted had a cost.
func dropFromAggregates(ctx context.Context, tx *sql.Tx, runID int64, gone []store.Result) error {
	byRow := map[SampleKey]*rowLoss{}
	var rows []SampleKey
	less := map[string]*conditionCounts{}
	models := map[ModelUse]int{}
	for i := range gone {
		r := &gone[i]
		k := SampleKey{r.SampleRow, r.Condition}
		if byRow[k] == nil {
			byRow[k] = &rowLoss{results: map[int64]bool{}}
			rows = append(rows, k)
		}
		s, c := countsOf(r)
		byRow[k].results[r.ID] = true
		byRow[k].counts.add(s)
		if less[r.Condition] == nil {
			less[r.Condition] = &conditionCounts{}
		}
		less[r.Condition].add(c)
		models[ModelUse{Model: r.Model, Source: r.CostSource}]++
	}
	st, err := prepareSampleRowEdits(ctx, tx)
	if err != nil {
		return err
	}
	defer st.close()
	for _, k := range rows {
		if err := st.drop(ctx, runID, k, byRow[k]); err != nil {
			return fmt.Errorf("sample %d under %s: %w", k.SampleRow, k.Condition, err)
		}
	}
	for name, c := range less {
		if err := lessenCondition(ctx, tx, runID, name, c); err != nil {
			return err
		}
	}
	return lessenModels(ctx, tx, runID, models)
}

// lessenCondition takes the results' counts from their condition's
// totals, adding up its cost again when a result had one.
func lessenCondition(ctx context.Context, tx *sql.Tx, runID int64, name string, c *conditionCounts) error {
	var cost sql.NullFloat64 // NULL: as it is
	if c.CostUSD != 0 {
		cost.Valid = true
		var err error
		if cost.Float64, err = conditionCost(ctx, tx, runID, name); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE condition_totals SET done = done - ?, errors = errors - ?, judge_errors = judge_errors - ?,
		tokens_in = tokens_in - ?, tokens_out = tokens_out - ?, cost_usd = coalesce(?, cost_usd), latency_ms = latency_ms - ?,
		retries = retries - ?, tool_calls = tool_calls - ?, tool_errors = tool_errors - ? WHERE run_id = ? AND condition = ?`,
		c.Done, c.Errors, c.JudgeErrors, c.TokensIn, c.TokensOut, cost, c.latencyMS, c.Retries, c.ToolCalls, c.ToolErrors,
		runID, name); err != nil {
		return fmt.Errorf("condition totals: %w", err)
	}
	return nil
}

// lessenModels takes the results from their models' counts, then drops
// the conditions and models left with none.
func lessenModels(ctx context.Context, tx *sql.Tx, runID int64, models map[ModelUse]int) error {
	for m, n := range models {
		if _, err := tx.ExecContext(ctx, `UPDATE model_totals SET results = results - ? WHERE run_id = ? AND model = ? AND cost_source = ?`,
			n, runID, m.Model, m.Source); err != nil {
			return fmt.Errorf("model totals: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM condition_totals WHERE run_id = ? AND done = 0`, runID); err != nil {
		return fmt.Errorf("condition totals: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM model_totals WHERE run_id = ? AND results = 0`, runID); err != nil {
		return fmt.Errorf("model totals: %w", err)
	}
	return nil
}

// conditionCost adds up the cost of a condition's results as storing them
// did: result by result in the order stored, each result's own cost, then
// its judgements' in theirs (countsOf).
func conditionCost(ctx context.Context, tx *sql.Tx, runID int64, condition string) (float64, error) {
	var total, cost float64
	var last int64
	err := store.EachRow(ctx, tx, `SELECT r.id, r.cost_usd, j.cost_usd FROM results r LEFT JOIN judgements j ON j.result_id = r.id
		WHERE r.run_id = ? AND r.condition = ? ORDER BY r.id, j.id`, []any{runID, condition}, func(rows *sql.Rows) error {
		var id int64
		var own float64
		var judge sql.NullFloat64
		if err := rows.Scan(&id, &own, &judge); err != nil {
			return err
		}
		if id != last {
			if last != 0 {
				total += cost
			}
			cost, last = own, id
		}
		if judge.Valid {
			cost += judge.Float64
		}
		return nil
	})
	if last != 0 {
		total += cost
	}
	if err != nil {
		return 0, fmt.Errorf("condition cost: %w", err)
	}
	return total, nil
}

// sampleRowEdits are the statements that edit a run's sample rows.
type sampleRowEdits struct {
	read, setSums, setScores, delSums, delScores *sql.Stmt
}

func prepareSampleRowEdits(ctx context.Context, tx *sql.Tx) (*sampleRowEdits, error) {
	var st sampleRowEdits
	for _, p := range []struct {
		to    **sql.Stmt
		query string
	}{
		{&st.read, `SELECT s.results, s.errors, s.judge_errors, s.claims, coalesce(l.scores, '') FROM sample_sums s
			LEFT JOIN sample_scores l USING (run_id, condition, sample_id) WHERE s.run_id = ?1 AND s.condition = ?2 AND s.sample_id = ?3`},
		{&st.setSums, `UPDATE sample_sums SET results = ?4, errors = ?5, judge_errors = ?6, claims = ?7, sums = ?8
			WHERE run_id = ?1 AND condition = ?2 AND sample_id = ?3`},
		{&st.setScores, `UPDATE sample_scores SET scores = ?4 WHERE run_id = ?1 AND condition = ?2 AND sample_id = ?3`},
		{&st.delSums, `DELETE FROM sample_sums WHERE run_id = ?1 AND condition = ?2 AND sample_id = ?3`},
		{&st.delScores, `DELETE FROM sample_scores WHERE run_id = ?1 AND condition = ?2 AND sample_id = ?3`},
	} {
		var err error
		if *p.to, err = tx.PrepareContext(ctx, p.query); err != nil {
			st.close()
			return nil, fmt.Errorf("sample aggregates: %w", err)
		}
	}
	return &st, nil
}

func (st *sampleRowEdits) close() {
	for _, s := range []*sql.Stmt{st.read, st.setSums, st.setScores, st.delSums, st.delScores} {
		if s != nil {
			s.Close()
		}
	}
}

// rowLoss is what a sample row loses: the results deleted, by id, and
// what they had added to its counts.
type rowLoss struct {
	results map[int64]bool
	counts  sampleCounts
}

// drop takes results out of the sample row k: their counts and lines go,
// and the sums are those of the lines left, added in their order, as
// storing the results left one by one added them.
func (st *sampleRowEdits) drop(ctx context.Context, runID int64, k SampleKey, gone *rowLoss) error {
	var c sampleCounts
	var text string
	if err := st.read.QueryRowContext(ctx, runID, k.Condition, k.SampleRow).Scan(&c.results, &c.errors, &c.judgeErrors, &c.claims, &text); err != nil {
		return fmt.Errorf("sample aggregates: %w", err)
	}
	c.results -= gone.counts.results
	c.errors -= gone.counts.errors
	c.judgeErrors -= gone.counts.judgeErrors
	c.claims -= gone.counts.claims
	text, err := withoutResults(text, gone.results)
	if err != nil {
		return err
	}
	args := []any{runID, k.Condition, k.SampleRow}
	if c.results == 0 {
		if _, err := st.delSums.ExecContext(ctx, args...); err != nil {
			return fmt.Errorf("sample aggregates: %w", err)
		}
		_, err := st.delScores.ExecContext(ctx, args...)
		return err
	}
	lines, err := parseLines(text, &names{})
	if err != nil {
		return err
	}
	if _, err := st.setSums.ExecContext(ctx, append(args, c.results, c.errors, c.judgeErrors, c.claims, sumsOfLines(lines).text())...); err != nil {
		return fmt.Errorf("sample aggregates: %w", err)
	}
	if text == "" {
		_, err = st.delScores.ExecContext(ctx, args...)
	} else {
		_, err = st.setScores.ExecContext(ctx, append(args, text)...)
	}
	return err
}

// withoutResults returns the lines of a sample_scores row without those of
// the results named: a judgement's line, which names its result, and the
// lines of its scores after it.
func withoutResults(text string, results map[int64]bool) (string, error) {
	var b strings.Builder
	keep := true
	for line := range strings.Lines(text) {
		if strings.HasPrefix(line, "j\x1f") {
			f := lineFields(strings.TrimSuffix(line, "\n"))
			_, _ = f.text()
			_, _ = f.int()
			result, err := f.int()
			if err != nil {
				return "", fmt.Errorf("unreadable line %q: %w", line, err)
			}
			keep = !results[result]
		}
		if keep {
			b.WriteString(line)
		}
	}
	return b.String(), nil
}

// sumsOfLines adds up a row's lines in their order, as storing their
// results added them (rowSums.add).
func sumsOfLines(l sampleLines) rowSums {
	var sums rowSums
	r := store.Result{Judgements: make([]store.Judgement, 1)}
	next := 0
	for at, j := range l.judgements {
		r.ID = j.result
		r.Judgements[0] = store.Judgement{ID: j.id, Evaluator: j.evaluator, Scores: r.Judgements[0].Scores[:0]}
		for ; next < len(l.scores) && l.scores[next].at == at; next++ {
			s := l.scores[next]
			r.Judgements[0].Scores = append(r.Judgements[0].Scores, store.Score{Metric: s.metric, Value: s.value})
		}
		sums = sums.add(&r)
	}
	return sums
}
