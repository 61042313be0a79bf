package web_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"assay"
	"assay/config"
	"assay/store"
	"assay/web"
)

// A verdict on a metric of the run's own rubric is checked against that
// metric's scale: pass/fail takes 0 or 1.
func TestReviewsKnowACustomRubricsScales(t *testing.T) {
	b, db := newServer(t, web.Config{})
	ctx := context.Background()
	ds := &store.Dataset{Name: "qa", Kind: assay.KindQA, SHA256: "qa", Format: "jsonl", Samples: 1}
	if _, err := db.CreateDataset(ctx, ds, []store.Sample{{Ordinal: 1, SampleID: "q1", Input: "q", Reference: "a"}}); err != nil {
		t.Fatal(err)
	}
	rows, _ := db.Samples(ctx, ds.ID, 0, 0)
	cfg := &config.Config{Agent: config.Agent{Type: config.AgentOpenAI, Model: "m"}, Evaluators: []config.Evaluator{config.JudgeWith("support")},
		Rubrics: []config.Rubric{{Name: "support", Metrics: []config.RubricMetric{{Name: "safe", Description: "d", Scale: "pass"},
			{Name: "cites_runbook", Description: "d", Scale: "1-5"}}}}}
	run := &store.Run{Name: "r", DatasetID: ds.ID, Config: cfg, Repetitions: 1, TotalTasks: 1, Conditions: []assay.Condition{{Name: "a"}}}
	if err := db.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	db.SaveResult(ctx, &store.Result{RunID: run.ID, SampleRow: rows[0].ID, Condition: "a", Repetition: 1, Attempts: 1, Response: "x",
		Judgements: []store.Judgement{{Evaluator: "support", Scores: []store.Score{{Metric: "safe", Value: 1, Reasoning: "fine"},
			{Metric: "cites_runbook", Value: 1, Reasoning: "none"}}}}})
	db.SetRunStatus(ctx, run.ID, store.RunCompleted, "")
	safe := scoreOf(t, db, run.ID, "support", "safe", 0)
	cites := scoreOf(t, db, run.ID, "support", "cites_runbook", 0)
	path := fmt.Sprintf("/api/runs/%d/reviews", run.ID)
	for _, tc := range []struct {
		score int64
		value float64
		want  int
	}{{safe.ID, 3, 422}, {safe.ID, 0, 201}, {cites.ID, 4, 201}, {cites.ID, 6, 422}} {
		if code, body := api(t, b, "POST", path, "", map[string]any{"score_id": tc.score, "verdict": "override", "value": tc.value, "reviewer": "ann"}); code != tc.want {
			t.Errorf("override %d with %v: %d %s, want %d", tc.score, tc.value, code, body, tc.want)
		}
	}
}

// The report shows what the judge is told, for the built-in rubric and a run's own.
func TestReportShowsTheJudgesPrompt(t *testing.T) {
	b, db := newServer(t, web.Config{})
	id, _ := handRunIn(t, db, store.RunCompleted)
	_, doc := b.get(fmt.Sprintf("/runs/%d", id))
	got := doc.Find("#judge-prompts").Text()
	if !strings.Contains(got, "rubric") || !strings.Contains(got, "## Factual adherence & safety (factual_adherence)") {
		t.Errorf("the judge's prompt: %.300q", got)
	}
}

// The run form shows what each judge evaluator's judge is told.
func TestRunFormShowsTheJudgesPrompt(t *testing.T) {
	f := newRunServer(t, rubricAgent("4"))
	f.qaDataset(1)
	_, doc := f.get("/runs/new")
	if got := doc.Find("#judge-prompt-rubric pre").Text(); !strings.Contains(got, "## Completeness (completeness)") {
		t.Errorf("the rubric's prompt on the form: %.200q", got)
	}
	if doc.Find("#judge-prompt-exact_match").Length() != 0 {
		t.Error("a deterministic evaluator shows a judge's prompt")
	}
}
