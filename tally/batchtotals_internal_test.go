package tally

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sync"
	"testing"

	"assay/internal/pgtest"
	"assay/store"
)

// A batch of writes adds its results to their runs' count, conditions'
// totals and models' counts once, before it commits: the totals are the
// same, cost sums to the last bit, as those computed again result by
// result in the order stored; a write rolled back adds nothing, and a
// condition with one result in the batch is added to as one with several.
func TestBatchTotalsEqualResultByResult(t *testing.T) {
	ctx := context.Background()
	db, run, rows := goldenRun(t, 8, 1, "a", "b", "c")
	v := 0.1
	result := func(sample int, condition string) *store.Result {
		v = math.Mod(v*7.3+0.137, 1)
		cost := 0.7e-16 // less than half of 1's last bit: added one by one to 1 they vanish, together they do not
		if sample == 0 {
			cost = 1
		}
		r := &store.Result{RunID: run.ID, SampleRow: rows[sample].ID, Condition: condition, Repetition: 1,
			Response: "answer", TokensIn: 100 + sample, TokensOut: 7 * sample, CostUSD: cost, LatencyMS: int64(900 + sample),
			Model: fmt.Sprint("model-", sample%2), CostSource: store.CostFromPrices, Attempts: 1,
			Judgements: []store.Judgement{{Evaluator: "rubric", TokensIn: 50, UnverifiedClaims: []string{"c"},
				Scores: []store.Score{{Metric: "accuracy", Value: v}}}}}
		if sample%3 == 0 {
			r.Retries = []string{"429, waited 1s"}
		}
		if sample == 5 {
			r.Error, r.ErrorKind, r.Judgements = "agent: timeout", store.ErrorTimeout, nil
		}
		return r
	}
	batch := func(tasks []struct {
		sample    int
		condition string
		fails     bool
	}) {
		t.Helper()
		var writes []func(context.Context, store.Tx) error
		for _, task := range tasks {
			r := result(task.sample, task.condition)
			fails := task.fails
			writes = append(writes, func(ctx context.Context, tx store.Tx) error {
				if _, err := tx.InsertResult(ctx, r); err != nil {
					return err
				}
				if fails { // its result stored, then the write fails: all of it is undone
					return errors.New("the write failed")
				}
				return nil
			})
		}
		for i, err := range db.CommitTogether(ctx, writes) {
			if (err != nil) != tasks[i].fails {
				t.Fatalf("write %d: %v", i, err)
			}
		}
	}
	type task = struct {
		sample    int
		condition string
		fails     bool
	}
	// Several results of a and b, one of c, one write rolled back.
	batch([]task{{0, "a", false}, {0, "b", false}, {1, "a", false}, {2, "a", true}, {3, "a", false}, {1, "b", false}, {0, "c", false}})
	// Added onto the stored totals: several of a, one of b, one failing alone.
	batch([]task{{4, "a", false}, {5, "a", false}, {2, "b", false}, {6, "a", false}, {6, "c", true}})
	batch([]task{{7, "a", false}})

	type totals struct {
		Conditions map[string][]any
		Models     map[string]int
		Count      int
		Last       int64
	}
	read := func() totals {
		t.Helper()
		out := totals{Conditions: map[string][]any{}, Models: map[string]int{}}
		err := store.EachRow(ctx, db.Read(), `SELECT condition, done, errors, judge_errors, tokens_in, tokens_out, cost_usd, latency_ms,
			retries, tool_calls, tool_errors FROM condition_totals WHERE run_id = ?`, []any{run.ID}, func(r *sql.Rows) error {
			var name string
			var done, errs, judgeErrs, in, outTokens, latency, retries, calls, toolErrs int64
			var cost float64
			if err := r.Scan(&name, &done, &errs, &judgeErrs, &in, &outTokens, &cost, &latency, &retries, &calls, &toolErrs); err != nil {
				return err
			}
			out.Conditions[name] = []any{done, errs, judgeErrs, in, outTokens, math.Float64bits(cost), latency, retries, calls, toolErrs}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		err = store.EachRow(ctx, db.Read(), `SELECT model, cost_source, results FROM model_totals WHERE run_id = ?`, []any{run.ID},
			func(r *sql.Rows) error {
				var model, source string
				var n int
				err := r.Scan(&model, &source, &n)
				out.Models[model+"/"+source] = n
				return err
			})
		if err != nil {
			t.Fatal(err)
		}
		v, err := Of(db).ResultsVersion(ctx, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		out.Count, out.Last = v.Count, v.Last
		return out
	}
	kept := read()
	var count int
	var last int64
	if err := db.Read().QueryRowContext(ctx, `SELECT count(*), max(id) FROM results WHERE run_id = ?`, run.ID).Scan(&count, &last); err != nil {
		t.Fatal(err)
	}
	if kept.Count != 11 || count != 11 || kept.Last != last {
		t.Errorf("the run counts %d results, the last %d; stored: %d, the last %d; want 11", kept.Count, kept.Last, count, last)
	}
	if got := kept.Conditions["a"][0]; got != int64(7) {
		t.Errorf("condition a is done %v times, want 7 (its failed write not counted)", got)
	}
	if _, ok := kept.Conditions["c"]; !ok || kept.Conditions["c"][0] != int64(1) {
		t.Errorf("condition c: %v, want one done", kept.Conditions["c"])
	}
	if err := Of(db).RebuildAggregates(ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	again := read()
	if !reflect.DeepEqual(kept.Conditions, again.Conditions) || !reflect.DeepEqual(kept.Models, again.Models) {
		t.Errorf("totals kept batch by batch:\n%v %v\ncomputed again result by result:\n%v %v",
			kept.Conditions, kept.Models, again.Conditions, again.Models)
	}
}

// Two servers sharing a run on Postgres commit batches of several results
// of one condition at once: each batch reads the condition's totals, adds
// its results and sets them; the totals count every result once.
func TestTotalsOfTwoServersAtOnce(t *testing.T) {
	if !pgtest.OnPostgres() {
		t.Skip("servers write one run's totals at once on a Postgres database: runs when the tests run against Postgres (make test does)")
	}
	ctx := context.Background()
	db, run, rows := goldenRun(t, 400, 1, "a", "b")
	other, err := Open(ctx, db.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	var wg sync.WaitGroup
	for k, server := range []*store.DB{db, other} {
		wg.Go(func() {
			for start := k * 200; start < k*200+200; start += 2 {
				var writes []func(context.Context, store.Tx) error
				for _, s := range rows[start : start+2] {
					for _, c := range []string{"a", "b"} {
						r := &store.Result{RunID: run.ID, SampleRow: s.ID, Condition: c, Repetition: 1, Response: "answer",
							CostUSD: 0.25, TokensIn: 10, Attempts: 1}
						writes = append(writes, func(ctx context.Context, tx store.Tx) error {
							_, err := tx.InsertResult(ctx, r)
							return err
						})
					}
				}
				for _, err := range server.CommitTogether(ctx, writes) {
					if err != nil {
						t.Error(err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	progress, err := Of(db).RunProgress(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range progress {
		if p.Done != 400 || p.TokensIn != 4000 || p.CostUSD != 100 {
			t.Errorf("condition %s: %d done, %d tokens, $%g in its totals; want 400, 4000, $100", p.Condition, p.Done, p.TokensIn, p.CostUSD)
		}
	}
}
