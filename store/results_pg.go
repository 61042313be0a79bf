package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// On Postgres a result is stored with one statement: its row, its
// judgements, their scores and the removal of its task's kept parts, each
// a part of one WITH, whose ids come back in the order they were given.
// A statement each cost a round trip to the server apiece, and the
// round trips were most of the engine's CPU on Postgres: the write that
// sends a statement wakes the server, on the same cores.

// insertResultWhole stores the result whose row's arguments are args
// (qInsertResult's) with its judgements and their scores, and removes its
// task's kept parts, in one statement; inserted is false when its task
// already had a result (nothing is then written).
func insertResultWhole(ctx context.Context, tx Tx, r *Result, args []any) (inserted bool, err error) {
	shape := make([]int, len(r.Judgements))
	for i := range r.Judgements {
		j := &r.Judgements[i]
		shape[i] = len(j.Scores)
		claims, _ := json.Marshal(nonNil(j.UnverifiedClaims))
		args = append(args, j.Evaluator, JudgeSlot(j.JudgeIndex, j.JudgeRepetition), j.Judge, j.Seed, j.Error, kindOf(j.Error, j.ErrorKind), max(j.Attempts, 1),
			j.Raw, j.Detail, string(claims), j.TokensIn, j.TokensOut, j.CacheReadTokens, j.CacheWriteTokens, j.CostUSD, j.LatencyMS, j.BatchedCalls)
		for _, s := range j.Scores {
			args = append(args, s.Metric, s.Value, s.Reasoning)
		}
	}
	rows, err := tx.QueryContext(ctx, wholeResultStatement(shape), args...)
	if err != nil {
		return false, fmt.Errorf("insert result: %w", err)
	}
	defer rows.Close()
	ids := make([]int64, 0, 1+len(shape))
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return false, fmt.Errorf("insert result: %w", err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return false, fmt.Errorf("insert result: %w", err)
	}
	if len(ids) == 0 {
		return false, nil
	}
	r.ID, ids = ids[0], ids[1:]
	for i := range r.Judgements {
		j := &r.Judgements[i]
		j.ID, ids = ids[0], ids[1:]
		for k := range j.Scores {
			j.Scores[k].ID, ids = ids[0], ids[1:]
		}
	}
	return true, nil
}

// wholeResultStatements are the statements of insertResultWhole, by the
// count of scores of each judgement.
var wholeResultStatements sync.Map

// wholeResultStatement is the statement storing a result whose judgements
// have shape[i] scores each. Its arguments: the result row's (qInsertResult's,
// $1 its run and $1–$4 its task), then each judgement's but its result and
// run, each followed by its scores' metric, value and reasoning. It returns
// the result's id, then each judgement's followed by its scores', or no row
// when the task had a result. The parts run as the final SELECT reads them,
// in order, so that the ids are drawn in the order the parts are given, as
// SQLite gives them.
func wholeResultStatement(shape []int) string {
	key := fmt.Sprint(shape)
	if q, ok := wholeResultStatements.Load(key); ok {
		return q.(string)
	}
	var b, out strings.Builder
	n := strings.Count(qInsertResult, "?") // the result row's
	params := func(count int) string {
		p := make([]string, count)
		for i := range p {
			n++
			p[i] = "$" + strconv.Itoa(n)
		}
		return strings.Join(p, ", ")
	}
	b.WriteString("WITH r AS (" + rebind(qInsertResult) + " RETURNING id)")
	out.WriteString("SELECT id FROM r")
	for i, scores := range shape {
		j := fmt.Sprintf("j%d", i)
		fmt.Fprintf(&b, ",\n%s AS (INSERT INTO judgements (result_id, run_id, %s) SELECT r.id, $1, %s FROM r RETURNING id)",
			j, judgementColumns, params(strings.Count(judgementColumns, ",")+1))
		out.WriteString(" UNION ALL SELECT id FROM " + j)
		for k := range scores {
			s := fmt.Sprintf("s%d_%d", i, k)
			fmt.Fprintf(&b, ",\n%s AS (INSERT INTO scores (judgement_id, result_id, run_id, metric, value, reasoning) SELECT %s.id, r.id, $1, %s FROM %s, r RETURNING id)",
				s, j, params(3), j)
			out.WriteString(" UNION ALL SELECT id FROM " + s)
		}
	}
	b.WriteString(",\nd AS (DELETE FROM pending_work WHERE run_id = $1 AND sample_id = $2 AND condition = $3 AND repetition = $4 AND EXISTS (SELECT FROM r))\n")
	q := b.String() + out.String()
	wholeResultStatements.Store(key, q)
	return q
}

// judgementColumns are a judgement's columns but its result and run, in
// qInsertJudgement's order.
const judgementColumns = `evaluator, judge_repetition, judge, seed, error,
		error_kind, attempts, raw, detail, unverified_claims, tokens_in, tokens_out, cache_read_tokens, cache_write_tokens,
		cost_usd, latency_ms, batched_calls`
