package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"assay"
	"assay/runner/llm/llmtest"
	"assay/store"
)

// The run form offers the judge calls in batches, with both prices in the
// estimate; a run whose judge calls go in batches says on its page how its
// batches stand, and its report counts them.
func TestJudgeCallsInBatchesFromThePage(t *testing.T) {
	fake := llmtest.New(rubricAgent("4"))
	f := newRunServerOn(t, fake)
	for _, m := range []string{"agent-model", "judge-model"} {
		if err := f.db.SetPrice(context.Background(), assay.Price{Model: m, InputPerMTok: 100, OutputPerMTok: 300}); err != nil {
			t.Fatal(err)
		}
	}
	dataset, conds := f.qaDataset(4), f.conditions("baseline")
	form := f.runForm(dataset, conds)
	f.get("/runs/new")
	_, doc := f.postForm("/runs/estimate", form)
	live := text(doc, "#estimate-cost")
	if other := text(doc, "#estimate-other"); !strings.Contains(other, "with the judge calls in batches") {
		t.Errorf("the estimate of a live run: %s, then %q; want the price with batches too", live, other)
	}
	form.Set("batch_judge", "1")
	_, doc = f.postForm("/runs/estimate", form)
	if batched, other := text(doc, "#estimate-cost"), text(doc, "#estimate-other"); batched == live || !strings.Contains(other, live+" with every call live") {
		t.Errorf("the estimate with batches: %s, then %q; live it was %s", batched, other, live)
	}
	fake.HoldBatches(true)
	id := f.launch(form)
	run, _ := f.db.Run(context.Background(), id)
	if run.Config.Batch == nil || !run.Config.Batch.Judge {
		t.Fatalf("the form's run sends no batches: %+v", run.Config.Batch)
	}
	f.postForm(fmt.Sprintf("/runs/%d/cancel", id), url.Values{})
	f.waitFor(id, store.RunCancelled)

	fake.HoldBatches(true)
	code, body := api(t, f.browser, "POST", "/api/runs", "", map[string]any{"dataset_id": dataset, "conditions": []string{"baseline"},
		"run": map[string]any{"agent": map[string]any{"type": "openai", "model": "agent-model", "base_url": fake.URL},
			"judge": map[string]any{"model": "judge-model", "base_url": fake.URL}, "evaluators": []string{"rubric"},
			"batch": map[string]any{"judge": true, "gather": "20ms", "poll": "10ms"}}})
	if code != 201 {
		t.Fatalf("launch: %d %s", code, body)
	}
	var launched struct {
		RunID int64 `json:"run_id"`
	}
	json.Unmarshal([]byte(body), &launched)
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if kept, _ := f.db.RunBatches(context.Background(), launched.RunID); len(kept) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no batch was sent")
		}
	}
	// The answers are kept as they come, a moment after their lines are
	// gathered: the page says so once all are.
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		_, doc = f.get(fmt.Sprintf("/runs/%d", launched.RunID))
		got := text(doc, "#batches")
		if strings.Contains(got, "Calls in batches:") && strings.Contains(got, "in progress at the provider") &&
			strings.Contains(got, "12 answers wait for their judgement") && strings.Contains(text(doc, "#run-answered"), "12 answered, 0 judged") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the page of a run whose batch is under way: %q", got)
		}
	}
	fake.HoldBatches(false)
	f.waitFor(launched.RunID, store.RunCompleted)
	_, doc = f.get(fmt.Sprintf("/runs/%d", launched.RunID))
	if got := text(doc, "#batches"); !strings.Contains(got, "12 lines") || !strings.Contains(got, "done") || strings.Contains(got, "in progress") ||
		strings.Contains(got, "wait") {
		t.Errorf("the page of a run whose batches ended: %q", got)
	}
	if got := text(doc, "#batched"); got != "judge calls in batches, at the batch price" {
		t.Errorf("the run's settings say %q of its batches", got)
	}
	var report struct {
		Conditions []struct {
			BatchedCalls *int `json:"batched_calls"`
		} `json:"conditions"`
		Batches []struct {
			ID, Provider, Status string
			Lines                int
		} `json:"batches"`
	}
	f.getJSON(fmt.Sprintf("/api/runs/%d/report", launched.RunID), &report)
	lines := 0
	for _, b := range report.Batches {
		lines += b.Lines
		if b.Provider != "openai" || b.Status != "completed" || b.ID == "" {
			t.Errorf("batch %+v", b)
		}
	}
	if len(report.Conditions) != 1 || report.Conditions[0].BatchedCalls == nil || *report.Conditions[0].BatchedCalls != 12 || lines != 12 {
		t.Errorf("the report counts %+v batched calls in %+v; want 12 (4 samples × 3 repetitions)", report.Conditions, report.Batches)
	}
}
