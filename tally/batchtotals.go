package tally

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"assay/store"
)

// A result adds to three rows every other result of its run adds to as
// well: its run's count (runs.results_count), its condition's totals and
// its model's count. A transaction of the committer holds up to 64 results
// of a run, so they are added to those rows once per transaction, just
// before it commits, instead of with three statements per result (a
// quarter of a result's statements). Each write's part is kept apart until
// its savepoint is released: a write rolled back adds nothing.

// totalsEntry is what one stored result adds to its run's totals.
type totalsEntry struct {
	run       int64
	result    int64 // the result's id
	condition string
	model     ModelUse // its model and cost source; Results unused
	counts    conditionCounts
}

// batchTotals gathers a transaction's results' parts of the totals.
type batchTotals struct {
	one []totalsEntry // the current write's, until its savepoint is released
	all []totalsEntry // the released writes', in the order stored

	// The batch's runs, conditions and models with what they add up to,
	// each found by a look along these: a batch holds a run or two and a
	// few conditions and models.
	runs       []runCount
	conditions []conditionAdds
	models     []modelCount
}

type runCount struct {
	run         int64
	n           int
	first, last int64 // the lowest and highest result ids
}

type conditionAdds struct {
	run       int64
	condition string
	n         int
	first     conditionCounts // the first result's counts
}

type modelCount struct {
	run   int64
	model ModelUse
	n     int
}

// add notes a stored result's part of the totals.
func (t *batchTotals) add(r *store.Result, c conditionCounts) {
	t.one = append(t.one, totalsEntry{run: r.RunID, result: r.ID, condition: r.Condition,
		model: ModelUse{Model: r.Model, Source: r.CostSource}, counts: c})
}

// keep keeps the current write's part: its savepoint was released.
func (t *batchTotals) keep() {
	t.all = append(t.all, t.one...)
	t.one = t.one[:0]
}

// drop forgets the current write's part: it was rolled back.
func (t *batchTotals) drop() { t.one = t.one[:0] }

// group counts the entries by run, by condition and by model.
func (t *batchTotals) group() {
	t.runs, t.conditions, t.models = t.runs[:0], t.conditions[:0], t.models[:0]
	for _, e := range t.all {
		r := 0
		for r < len(t.runs) && t.runs[r].run != e.run {
			r++
		}
		if r == len(t.runs) {
			t.runs = append(t.runs, runCount{run: e.run, first: e.result})
		}
		t.runs[r].n++
		t.runs[r].first, t.runs[r].last = min(t.runs[r].first, e.result), max(t.runs[r].last, e.result)
		c := 0
		for c < len(t.conditions) && (t.conditions[c].run != e.run || t.conditions[c].condition != e.condition) {
			c++
		}
		if c == len(t.conditions) {
			t.conditions = append(t.conditions, conditionAdds{run: e.run, condition: e.condition, first: e.counts})
		}
		t.conditions[c].n++
		m := 0
		for m < len(t.models) && (t.models[m].run != e.run || t.models[m].model != e.model) {
			m++
		}
		if m == len(t.models) {
			t.models = append(t.models, modelCount{run: e.run, model: e.model})
		}
		t.models[m].n++
	}
	// Servers sharing a run on Postgres add to its totals at once. Each
	// transaction first updates its runs' rows (qCountResults), which
	// holds another's flush of the same run until it commits: a
	// condition's totals are then read as the other left them, never set
	// from a stale read. The runs are taken in one order, so that two
	// transactions of the same two runs do not wait for each other.
	slices.SortFunc(t.runs, func(a, b runCount) int { return cmp.Compare(a.run, b.run) })
}

// flushTotals adds the transaction's results to their runs' totals; it is
// called once, before the transaction commits. The totals of a condition
// with several results in the transaction are read and each result's
// counts added to them in the order stored, so that its cost sums are the
// same, to the last bit, as adding them result by result; those of a
// condition with one are added to by a statement, as before.
func flushTotals(ctx context.Context, w store.Tx, t *batchTotals) error {
	t.keep()
	defer func() { t.all = t.all[:0] }()
	t.group()
	for _, r := range t.runs {
		if _, err := w.ExecPrepared(ctx, qCountResults, r.n, r.first, r.last, r.run); err != nil {
			return fmt.Errorf("count results: %w", err)
		}
	}
	for _, k := range t.conditions {
		q, c := qAddConditionTotals, k.first
		if k.n > 1 {
			q, c = qSetConditionTotals, conditionCounts{}
			if err := storedConditionTotals(ctx, w, k.run, k.condition, &c); err != nil {
				return err
			}
			for _, e := range t.all {
				if e.run == k.run && e.condition == k.condition {
					c.add(e.counts)
				}
			}
		}
		if _, err := w.ExecPrepared(ctx, q, k.run, k.condition, c.Done, c.Errors, c.JudgeErrors,
			c.TokensIn, c.TokensOut, c.CostUSD, c.latencyMS, c.Retries, c.ToolCalls, c.ToolErrors); err != nil {
			return fmt.Errorf("condition totals: %w", err)
		}
	}
	for _, m := range t.models {
		if _, err := w.ExecPrepared(ctx, qAddModelTotals, m.run, m.model.Model, m.model.Source, m.n); err != nil {
			return fmt.Errorf("model totals: %w", err)
		}
	}
	return nil
}

// storedConditionTotals reads a condition's totals as stored into c; zero when
// it has none yet.
func storedConditionTotals(ctx context.Context, w store.Tx, run int64, condition string, c *conditionCounts) error {
	st, err := w.Prepared(ctx, qConditionTotals)
	if err != nil {
		return err
	}
	err = st.QueryRowContext(ctx, run, condition).Scan(&c.Done, &c.Errors, &c.JudgeErrors, &c.TokensIn, &c.TokensOut,
		&c.CostUSD, &c.latencyMS, &c.Retries, &c.ToolCalls, &c.ToolErrors)
	if errors.Is(err, sql.ErrNoRows) {
		*c = conditionCounts{}
		return nil
	} else if err != nil {
		return fmt.Errorf("condition totals: %w", err)
	}
	return nil
}

// qCountResults adds results to their run's count, and notes the lowest
// and highest of their ids.
const qCountResults = `UPDATE runs SET results_count = results_count + ?1,
	results_first = CASE results_first WHEN 0 THEN ?2 ELSE min(results_first, ?2) END,
	results_last = max(results_last, ?3) WHERE id = ?4`

const qConditionTotals = `SELECT done, errors, judge_errors, tokens_in, tokens_out, cost_usd, latency_ms, retries,
		tool_calls, tool_errors FROM condition_totals WHERE run_id = ? AND condition = ?`

// qSetConditionTotals writes a condition's totals.
const qSetConditionTotals = `INSERT INTO condition_totals (run_id, condition, done, errors, judge_errors,
		tokens_in, tokens_out, cost_usd, latency_ms, retries, tool_calls, tool_errors)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (run_id, condition) DO UPDATE SET done = excluded.done, errors = excluded.errors,
			judge_errors = excluded.judge_errors, tokens_in = excluded.tokens_in, tokens_out = excluded.tokens_out,
			cost_usd = excluded.cost_usd, latency_ms = excluded.latency_ms, retries = excluded.retries,
			tool_calls = excluded.tool_calls, tool_errors = excluded.tool_errors`
