package report_test

import (
	"context"
	"path/filepath"
	"testing"

	"assay"
	"assay/config"
	"assay/report"
	"assay/store"
	"assay/tally"
)

// A code run of three repetitions gives pass@1, pass@2 and pass@3 per
// condition, checked against the estimator computed by hand.
func TestPassAtKOfACodeRun(t *testing.T) {
	ctx := context.Background()
	db, err := tally.Open(ctx, filepath.Join(t.TempDir(), "assay.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var samples []store.Sample
	for i := 1; i <= 3; i++ {
		samples = append(samples, store.Sample{Ordinal: i, SampleID: string(rune('0' + i)), Input: "def f():", Reference: "pass",
			Test: "def check(f): pass", EntryPoint: "f"})
	}
	ds := &store.Dataset{Name: "code", Kind: assay.KindCode, SHA256: "code", Format: "jsonl", Samples: 3}
	if _, err := db.CreateDataset(ctx, ds, samples); err != nil {
		t.Fatal(err)
	}
	rows, _ := db.Samples(ctx, ds.ID, 0, 0)
	cfg := &config.Config{Evaluators: []config.Evaluator{config.EvalCodeExecution}}
	run := &store.Run{Name: "code", DatasetID: ds.ID, Config: cfg, Repetitions: 3, TotalTasks: 9, Conditions: []assay.Condition{{Name: "a"}}}
	if err := db.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	passed := [][]float64{{1, 0, 0}, {1, 1, 1}, {0, 0, 0}}
	for i, s := range rows {
		for rep := 1; rep <= 3; rep++ {
			r := &store.Result{RunID: run.ID, SampleRow: s.ID, Condition: "a", Repetition: rep, Attempts: 1, Response: "x",
				Judgements: []store.Judgement{{Evaluator: "code_execution", Scores: []store.Score{{Metric: "code_execution", Value: passed[i][rep-1]}}}}}
			if _, err := db.SaveResult(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
	}
	db.SetRunStatus(ctx, run.ID, store.RunCompleted, "")
	s, err := report.Summarize(ctx, db, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	got := s.Conditions[0].PassAtK
	// pass@1: (1/3 + 1 + 0)/3; pass@2: (1 − C(2,2)/C(3,2) = 2/3, 1, 0)/3; pass@3: (1, 1, 0)/3.
	want := map[string]float64{"1": (1.0/3 + 1) / 3, "2": (2.0/3 + 1) / 3, "3": 2.0 / 3}
	if len(got) != len(want) {
		t.Fatalf("pass@k %v, want k = 1, 2, 3", got)
	}
	for k, w := range want {
		if !near(got[k], w) {
			t.Errorf("pass@%s = %v, want %v", k, got[k], w)
		}
		if ci := s.Conditions[0].PassAtKCI95[k]; ci[0] < 0 || ci[1] > 1 || ci[0] > got[k] || ci[1] < got[k] {
			t.Errorf("pass@%s interval %v around %v", k, ci, got[k])
		}
	}
	if !near(got["1"], s.Conditions[0].Metrics[0].Mean) {
		t.Errorf("pass@1 %v differs from the code_execution mean %v", got["1"], s.Conditions[0].Metrics[0].Mean)
	}
}
