package web_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"assay/runner/llm/llmtest"
	"assay/store"
	"assay/tally"
)

// A script launches a run, follows it, cancels and resumes it, all through
// the JSON API; a bad request is refused naming what is wrong, storing nothing.
func TestLaunchAndResumeThroughTheAPI(t *testing.T) {
	release := make(chan struct{})
	agent := func(*llmtest.ChatRequest) llmtest.Reply {
		<-release
		return llmtest.Reply{Content: "4"}
	}
	f := newRunServer(t, llmtest.JudgeAndAgent(llmtest.Judge(nil), agent))
	defer closeOnce(release)
	ds := f.qaDataset(3)
	f.conditions("baseline", "careful")
	run := map[string]any{"agent": map[string]any{"type": "openai", "model": "agent-model", "base_url": f.fake.URL},
		"judge": map[string]any{"model": "judge-model", "base_url": f.fake.URL}, "execution": map[string]any{"num_repetitions": 2, "max_concurrent": 1}}

	for _, tc := range []struct {
		body any
		want string
	}{
		{map[string]any{"dataset_id": ds, "conditions": []string{"baseline", "nosuch"}, "run": run}, `conditions[1]: no stored condition \"nosuch\"`},
		{map[string]any{"dataset_id": 999, "conditions": []string{"baseline"}, "run": run}, "dataset_id: no dataset 999"},
		{map[string]any{"dataset_id": ds, "conditions": []string{"baseline"}, "run": map[string]any{"agent": map[string]any{"modle": "x"}}}, "agent.modle"},
		{map[string]any{"dataset_id": ds, "conditions": []string{"baseline"}, "run": map[string]any{"dataset": map[string]any{"path": "x.jsonl"}}}, "dataset: not here"},
		{map[string]any{"dataset_id": ds, "conditions": []string{"baseline"}, "run": run, "extra": 1}, `unknown field \"extra\"`},
	} {
		if code, body := api(t, f.browser, "POST", "/api/runs", "", tc.body); code != 422 || !strings.Contains(body, tc.want) {
			t.Errorf("%v: %d %s, want 422 saying %q", tc.body, code, body, tc.want)
		}
	}
	if runs, _ := tally.Of(f.db).Runs(t.Context()); len(runs) != 0 {
		t.Fatalf("refused launches stored %d runs", len(runs))
	}

	code, body := api(t, f.browser, "POST", "/api/runs", "", map[string]any{"dataset_id": ds, "conditions": []string{"baseline", "careful"}, "run": run})
	var launched struct {
		RunID      int64  `json:"run_id"`
		TotalTasks int    `json:"total_tasks"`
		URL        string `json:"url"`
	}
	json.Unmarshal([]byte(body), &launched)
	if code != 201 || launched.TotalTasks != 12 || !strings.HasSuffix(launched.URL, fmt.Sprintf("/runs/%d", launched.RunID)) {
		t.Fatalf("launch: %d %s", code, body)
	}
	release <- struct{}{}
	waitResults(t, f.db, launched.RunID, 1)
	if code, body := api(t, f.browser, "POST", fmt.Sprintf("/api/runs/%d/cancel", launched.RunID), "", nil); code != 200 || !strings.Contains(body, `"status":"cancelled"`) {
		t.Fatalf("cancel: %d %s", code, body)
	}
	closeOnce(release)
	if code, body := api(t, f.browser, "POST", fmt.Sprintf("/api/runs/%d/resume", launched.RunID), "", nil); code != 202 {
		t.Fatalf("resume: %d %s", code, body)
	}
	f.waitFor(launched.RunID, store.RunCompleted)
	_, body = api(t, f.browser, "GET", fmt.Sprintf("/api/runs/%d", launched.RunID), "", nil)
	var sum struct {
		Status  string `json:"status"`
		Results int    `json:"results"`
	}
	json.Unmarshal([]byte(body), &sum)
	if sum.Status != "completed" || sum.Results != 12 {
		t.Errorf("the summary: %s", body)
	}
	if code, body := api(t, f.browser, "POST", fmt.Sprintf("/api/runs/%d/resume", launched.RunID), "", nil); code != 409 {
		t.Errorf("resuming a completed run: %d %s", code, body)
	}
}
