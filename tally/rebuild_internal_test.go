package tally

import (
	"context"
	"encoding/json"
	"math"
	"testing"

	"assay/store"
)

// A run's tallies dropped — every derived table emptied, its count of
// results zeroed — read differently; RebuildRun computes them again from
// the record alone, and its report data, progress, samples table, runs
// list row and results' version are what they were, in either store.
func TestRebuildFromTheRecordGivesTheSameTallies(t *testing.T) {
	ctx := context.Background()
	db, run, rows := goldenRun(t, 9, 2, "plain", "tools")
	v := 0.4
	for i, s := range rows {
		for _, c := range run.Conditions {
			for rep := 1; rep <= 2; rep++ {
				v = math.Mod(v*7.3+0.137, 1)
				r := &store.Result{RunID: run.ID, SampleRow: s.ID, Condition: c.Name, Repetition: rep, Response: "answer",
					TokensIn: 100 + i, TokensOut: 7 * i, CostUSD: v / 1000, LatencyMS: int64(900 + i), Model: []string{"model-a", "model-b"}[i%2],
					CostSource: store.CostFromPrices, Attempts: 1,
					Judgements: []store.Judgement{
						{Evaluator: "rubric", JudgeIndex: 0, Judge: "judge-a", Scores: []store.Score{{Metric: "accuracy", Value: v}}},
						{Evaluator: "rubric", JudgeIndex: 1, Judge: "judge-b", Scores: []store.Score{{Metric: "accuracy", Value: 1 - v}}}}}
				if (i+rep)%4 == 0 {
					r.Error, r.ErrorKind, r.Judgements = "agent: timeout", store.ErrorTimeout, nil
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
	tl := Of(db)
	read := func() string {
		t.Helper()
		data, err := tl.ReportData(ctx, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		progress, err := tl.RunProgress(ctx, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		stats, err := tl.SampleStats(ctx, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		list, err := tl.RunsByID(ctx, []int64{run.ID})
		if err != nil || len(list) != 1 {
			t.Fatalf("the runs list: %v, %v", list, err)
		}
		version, err := tl.ResultsVersion(ctx, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal([]any{ScoreRows(data.Scores), data.Models, data.Conditions, data.TopErrors, progress, stats.Rows,
			list[0].Done, list[0].Errors, list[0].CostUSD, version})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	before := read()
	raw := rawDB(t, db)
	for _, table := range []string{"sample_scores", "sample_sums", "condition_totals", "model_totals", "sample_stats_kept", "report_scores_kept"} {
		if _, err := raw.Exec(`DELETE FROM ` + table); err != nil {
			t.Fatalf("%s: %v", table, err)
		}
	}
	if _, err := raw.Exec(`UPDATE runs SET results_count = 0, results_first = 0`); err != nil {
		t.Fatal(err)
	}
	if read() == before {
		t.Fatal("the tallies read the same with their tables empty: the test tests nothing")
	}
	if n, err := db.RebuildRun(ctx, run.ID); err != nil || n != 9*2*2 {
		t.Fatalf("rebuilt %d results: %v", n, err)
	}
	if after := read(); after != before {
		t.Errorf("after the rebuild:\n%s\nbefore:\n%s", after, before)
	}
}
