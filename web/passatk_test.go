package web_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"assay"
	"assay/config"
	"assay/store"
	"assay/web"
)

// A code run's report has a pass@k table: pass@1 to pass@N per condition.
func TestReportShowsPassAtK(t *testing.T) {
	b, db := newServer(t, web.Config{})
	ctx := context.Background()
	samples := []store.Sample{{Ordinal: 1, SampleID: "p1", Input: "def f():", Reference: "pass", Test: "t", EntryPoint: "f"},
		{Ordinal: 2, SampleID: "p2", Input: "def g():", Reference: "pass", Test: "t", EntryPoint: "g"}}
	ds := &store.Dataset{Name: "code", Kind: assay.KindCode, SHA256: "code", Format: "jsonl", Samples: 2}
	if _, err := db.CreateDataset(ctx, ds, samples); err != nil {
		t.Fatal(err)
	}
	rows, _ := db.Samples(ctx, ds.ID, 0, 0)
	cfg := &config.Config{Agent: config.Agent{Type: config.AgentOpenAI, Model: "m"}, Evaluators: []config.Evaluator{config.EvalCodeExecution}}
	run := &store.Run{Name: "code", DatasetID: ds.ID, Config: cfg, Repetitions: 2, TotalTasks: 4, Conditions: []assay.Condition{{Name: "a"}}}
	if err := db.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	for i, s := range rows {
		for rep := 1; rep <= 2; rep++ {
			v := float64(i) * float64(rep-1) // p1 fails twice; p2 fails then passes
			db.SaveResult(ctx, &store.Result{RunID: run.ID, SampleRow: s.ID, Condition: "a", Repetition: rep, Attempts: 1, Response: "x",
				Judgements: []store.Judgement{{Evaluator: "code_execution", Scores: []store.Score{{Metric: "code_execution", Value: v}}}}})
		}
	}
	db.SetRunStatus(ctx, run.ID, store.RunCompleted, "")
	_, doc := b.get(fmt.Sprintf("/runs/%d", run.ID))
	var cells []string
	doc.Find("#pass-at-k-table th, #pass-at-k-table td").Each(func(_ int, s *goquery.Selection) { cells = append(cells, strings.TrimSpace(s.Text())) })
	// pass@1 = (0 + 1/2)/2; pass@2 = (0 + 1)/2; two problems: a wide interval, clipped to [0, 1].
	if got := strings.Join(cells, "|"); got != "Condition|pass@1|95% CI|pass@2|95% CI|a|0.250|0.000 – 1.000|0.500|0.000 – 1.000" {
		t.Errorf("pass@k table: %q", got)
	}
}
