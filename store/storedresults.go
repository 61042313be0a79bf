package store

import (
	"context"
	"database/sql"
	"fmt"
)

// StoredResults reads a run's results with what their aggregates need of
// their judgements and scores, in id order: all of them, or those the
// condition and (on results r, its arguments after the run's id) picks.
func StoredResults(ctx context.Context, tx *sql.Tx, runID int64, and string, args ...any) ([]Result, error) {
	args = append([]any{runID}, args...)
	out, byID, err := storedResultRows(ctx, tx, runID, and, args)
	if err != nil {
		return nil, fmt.Errorf("rebuild aggregates: %w", err)
	}
	places, err := storedJudgements(ctx, tx, out, byID, and, args)
	if err != nil {
		return nil, fmt.Errorf("rebuild aggregates: %w", err)
	}
	err = EachRow(ctx, tx, `SELECT s.id, s.judgement_id, s.metric, s.value
		FROM results r JOIN judgements j ON j.result_id = r.id JOIN scores s ON s.judgement_id = j.id
		WHERE r.run_id = ? `+and+` ORDER BY s.id`, args,
		func(rows *sql.Rows) error {
			var s Score
			var judgementID int64
			if err := rows.Scan(&s.ID, &judgementID, &s.Metric, &s.Value); err != nil {
				return err
			}
			at := places[judgementID]
			j := &out[at.result].Judgements[at.judgement]
			j.Scores = append(j.Scores, s)
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("rebuild aggregates: %w", err)
	}
	return out, nil
}

// storedResultRows reads the results themselves, with their places by id.
// Of their retries and tool calls, only whether and how many are read.
func storedResultRows(ctx context.Context, tx *sql.Tx, runID int64, and string, args []any) ([]Result, map[int64]int, error) {
	var out []Result
	byID := map[int64]int{}
	err := EachRow(ctx, tx, `SELECT id, sample_id, condition, repetition, error, tokens_in, tokens_out, cost_usd, latency_ms,
		model, cost_source, retries != '[]', json_array_length(tool_calls),
		(SELECT count(*) FROM json_each(tool_calls) WHERE json_extract(value, '$.is_error'))
		FROM results r WHERE run_id = ? `+and+` ORDER BY id`, args, func(rows *sql.Rows) error {
		r := Result{RunID: runID}
		var retried bool
		var calls, failedCalls int
		if err := rows.Scan(&r.ID, &r.SampleRow, &r.Condition, &r.Repetition, &r.Error, &r.TokensIn, &r.TokensOut,
			&r.CostUSD, &r.LatencyMS, &r.Model, &r.CostSource, &retried, &calls, &failedCalls); err != nil {
			return err
		}
		if retried {
			r.Retries = []string{""}
		}
		r.ToolCalls = make([]ToolCall, calls)
		for k := range failedCalls {
			r.ToolCalls[k].IsError = true
		}
		byID[r.ID] = len(out)
		out = append(out, r)
		return nil
	})
	return out, byID, err
}

// storedJudgements gives the results their judgements, found through
// their results (migration 0024), and returns where each judgement sits.
func storedJudgements(ctx context.Context, tx *sql.Tx, out []Result, byID map[int64]int, and string, args []any) (map[int64]judgementPlace, error) {
	places := map[int64]judgementPlace{}
	err := EachRow(ctx, tx, `SELECT j.id, j.result_id, j.evaluator, j.judge_repetition, j.judge, j.error,
		json_array_length(j.unverified_claims), j.tokens_in, j.tokens_out, j.cost_usd
		FROM results r JOIN judgements j ON j.result_id = r.id WHERE r.run_id = ? `+and+` ORDER BY j.id`, args, func(rows *sql.Rows) error {
		var j Judgement
		var resultID int64
		var slot, claims int
		if err := rows.Scan(&j.ID, &resultID, &j.Evaluator, &slot, &j.Judge, &j.Error, &claims, &j.TokensIn, &j.TokensOut, &j.CostUSD); err != nil {
			return err
		}
		j.JudgeIndex, j.JudgeRepetition = FromSlot(slot)
		j.UnverifiedClaims = make([]string, claims)
		i := byID[resultID]
		places[j.ID] = judgementPlace{i, len(out[i].Judgements)}
		out[i].Judgements = append(out[i].Judgements, j)
		return nil
	})
	return places, err
}
