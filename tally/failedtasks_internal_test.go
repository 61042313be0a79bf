package tally

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"math"
	"testing"

	"assay/store"
)

// Clearing a run's failed tasks takes them out of the run's aggregates
// without computing those again: what is left equals, to the last bit,
// the aggregates computed again from the results left. The failures have
// costs, tokens, retries, tool calls and judgements; one condition fails
// every time, one model answers only failed tasks, and one condition's
// failures cost nothing.
func TestClearFailedTasksLeavesTheAggregatesOfTheRest(t *testing.T) {
	ctx := context.Background()
	db, run, rows := goldenRun(t, 12, 2, "steady", "flaky", "dead")
	v := 0.3
	for i, s := range rows {
		for _, c := range run.Conditions {
			for rep := 1; rep <= 2; rep++ {
				v = math.Mod(v*7.3+0.137, 1)
				r := &store.Result{RunID: run.ID, SampleRow: s.ID, Condition: c.Name, Repetition: rep, Response: "answer",
					TokensIn: 100 + i, TokensOut: 7 * i, CostUSD: v / 1000, LatencyMS: int64(900 + i), Model: "model-a",
					CostSource: store.CostFromPrices, Attempts: 1,
					ToolCalls: []store.ToolCall{{Tool: "search", IsError: i%4 == 0}},
					Judgements: []store.Judgement{{Evaluator: "rubric", TokensIn: 50, CostUSD: v / 3000, UnverifiedClaims: []string{"c"},
						Scores: []store.Score{{Metric: "accuracy", Value: v}, {Metric: "completeness", Value: 1 - v}}}}}
				fail := c.Name == "dead" || (c.Name == "flaky" && (i+rep)%3 == 0) || (c.Name == "steady" && i == 5 && rep == 2)
				if fail {
					r.Error, r.ErrorKind, r.Model = "agent: timeout", store.ErrorTimeout, "model-b"
					r.Retries = []string{"429, waited 1s"}
					r.Judgements = r.Judgements[:0]
					if c.Name == "steady" {
						r.CostUSD = 0 // its condition's cost is kept as it is
					}
					if c.Name == "flaky" && i%2 == 0 { // a failure judged anyway
						r.Judgements = []store.Judgement{{Evaluator: "rubric", CostUSD: v / 5000, Error: "judge: malformed", UnverifiedClaims: []string{"x", "y"}}}
					}
				}
				if _, err := db.SaveResult(ctx, r); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if err := db.SetRunStatus(ctx, run.ID, store.RunCompleted, ""); err != nil {
		t.Fatal(err)
	}
	before := readAggregates(t, db, run.ID)
	n, err := db.ClearFailedTasks(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := 24 + 8 + 1; n != want {
		t.Errorf("cleared %d tasks, want %d", n, want)
	}
	cleared := readAggregates(t, db, run.ID)
	if maps.Equal(cleared, before) {
		t.Fatal("the aggregates did not change")
	}
	for _, gone := range []string{"totals dead", "model model-b/prices"} {
		if _, ok := cleared[gone]; ok {
			t.Errorf("%s is left: %s", gone, cleared[gone])
		}
	}
	if err := Of(db).RebuildAggregates(ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	rebuilt := readAggregates(t, db, run.ID)
	for k, v := range rebuilt {
		if cleared[k] != v {
			t.Errorf("%s:\nleft by clearing %s\ncomputed again  %s", k, cleared[k], v)
		}
	}
	for k, v := range cleared {
		if _, ok := rebuilt[k]; !ok {
			t.Errorf("%s left by clearing is not computed again: %s", k, v)
		}
	}
}

// readAggregates reads every aggregate row of a run as text, costs by their bits.
func readAggregates(t *testing.T, db *store.DB, runID int64) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, q := range []string{
		`SELECT 'sums ' || condition || ' ' || sample_id, results || ' ' || errors || ' ' || judge_errors || ' ' || claims || ' ' || sums
			FROM sample_sums WHERE run_id = ?`,
		`SELECT 'scores ' || condition || ' ' || sample_id, scores FROM sample_scores WHERE run_id = ?`,
		`SELECT 'totals ' || condition, concat_ws(' ', done, errors, judge_errors, tokens_in, tokens_out, latency_ms, retries,
			tool_calls, tool_errors) FROM condition_totals WHERE run_id = ?`,
		`SELECT 'model ' || model || '/' || cost_source, results FROM model_totals WHERE run_id = ?`,
	} {
		if err := store.EachRow(context.Background(), db.Read(), q, []any{runID}, func(r *sql.Rows) error {
			var k, v string
			err := r.Scan(&k, &v)
			out[k] = v
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	if err := store.EachRow(context.Background(), db.Read(), `SELECT condition, cost_usd FROM condition_totals WHERE run_id = ?`, []any{runID},
		func(r *sql.Rows) error {
			var c string
			var cost float64
			err := r.Scan(&c, &cost)
			out["cost "+c] = fmt.Sprint(math.Float64bits(cost))
			return err
		}); err != nil {
		t.Fatal(err)
	}
	return out
}
