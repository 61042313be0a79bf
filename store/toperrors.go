package store

import (
	"context"
	"fmt"
)

// ErrorCount is how many of a condition's results (or their judgements)
// failed with one message.
type ErrorCount struct {
	Message string    `json:"message"`
	Kind    ErrorKind `json:"kind"`
	Count   int       `json:"count"`
	Judge   bool      `json:"judge,omitempty"` // a judge's or evaluator's error, not the agent's
}

// TopErrors returns each condition's most common error messages, at most n
// of the agent's and n of the judges', each most frequent first.
func (db *DB) TopErrors(ctx context.Context, runID int64, n int) (map[string][]ErrorCount, error) {
	tx, err := db.BeginRead(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	return TopErrorsIn(ctx, tx, runID, n)
}

func TopErrorsIn(ctx context.Context, tx Querier, runID int64, n int) (map[string][]ErrorCount, error) {
	out := map[string][]ErrorCount{}
	queries := []struct {
		judge bool
		sql   string
	}{
		{false, `SELECT condition, error, max(error_kind), count(*) AS n FROM results INDEXED BY results_errors
			WHERE run_id = ? AND error != '' GROUP BY condition, error ORDER BY condition, n DESC, error`},
		{true, `SELECT r.condition, j.error, max(j.error_kind), count(*) AS n
			FROM judgements j INDEXED BY judgements_errors JOIN results r ON r.id = j.result_id
			WHERE j.run_id = ? AND j.error != '' GROUP BY r.condition, j.error ORDER BY r.condition, n DESC, j.error`},
	}
	for _, q := range queries {
		rows, err := tx.QueryContext(ctx, q.sql, runID)
		if err != nil {
			return nil, fmt.Errorf("top errors: %w", err)
		}
		taken := map[string]int{}
		for rows.Next() {
			var cond string
			e := ErrorCount{Judge: q.judge}
			if err := rows.Scan(&cond, &e.Message, &e.Kind, &e.Count); err != nil {
				rows.Close()
				return nil, fmt.Errorf("top errors: %w", err)
			}
			if e.Kind == "" {
				e.Kind = ErrorOther
			}
			if taken[cond] < n {
				taken[cond]++
				out[cond] = append(out[cond], e)
			}
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("top errors: %w", err)
		}
	}
	return out, nil
}
