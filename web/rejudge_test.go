package web_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"assay/runner/llm/llmtest"
	"assay/store"
)

// The owner judges a run's answers again from the API and from the
// report's form: each new run names its source, calls no agent, and its
// report says whose answers it judged.
func TestJudgeTheAnswersAgainFromTheAPIAndTheReport(t *testing.T) {
	var agentCalls atomic.Int64
	f := newRunServer(t, llmtest.JudgeAndAgent(panelJudge, func(*llmtest.ChatRequest) llmtest.Reply {
		agentCalls.Add(1)
		return llmtest.Reply{Content: "An answer."}
	}))
	ds := f.qaDataset(4)
	f.conditions("baseline")
	id := f.launchRun(ds, []string{"baseline"}, map[string]any{"agent": map[string]any{"type": "openai", "model": "agent-model", "base_url": f.fake.URL},
		"judge": map[string]any{"model": "lenient-model", "base_url": f.fake.URL}, "execution": map[string]any{"num_repetitions": 1}})
	if agentCalls.Load() != 4 {
		t.Fatalf("the run made %d agent calls, want 4", agentCalls.Load())
	}
	code, body := api(t, f.browser, "POST", fmt.Sprintf("/api/runs/%d/rejudge", id), "", map[string]any{"evaluators": []string{"rubric"}, "agent": map[string]any{}})
	if code != 422 || !strings.Contains(body, "agent: not a judge's key") {
		t.Errorf("judge keys with the agent's: %d %s", code, body)
	}
	code, body = api(t, f.browser, "POST", fmt.Sprintf("/api/runs/%d/rejudge", id), "", map[string]any{"judge": map[string]any{"model": "strict-model", "base_url": f.fake.URL}})
	var made struct {
		RunID int64 `json:"run_id"`
	}
	if json.Unmarshal([]byte(body), &made); code != 202 || made.RunID == 0 {
		t.Fatalf("rejudge: %d %s", code, body)
	}
	f.waitFor(made.RunID, store.RunCompleted)
	var sum struct {
		RejudgedFrom int64 `json:"rejudged_from"`
		Results      int   `json:"results"`
	}
	f.getJSON(fmt.Sprintf("/api/runs/%d", made.RunID), &sum)
	if sum.RejudgedFrom != id || sum.Results != 4 || agentCalls.Load() != 4 {
		t.Errorf("the run judging again: %+v, %d agent calls in all; want rejudged from %d, 4 results, still 4 calls", sum, agentCalls.Load(), id)
	}
	_, doc := f.get(fmt.Sprintf("/runs/%d", made.RunID))
	if got := doc.Find("#run-rejudged").Text(); !strings.Contains(got, fmt.Sprintf("run %d", id)) || !strings.Contains(got, "no agent was called") {
		t.Errorf("the new run's report says %q of its answers", got)
	}
	// The source's report offers the form, filled in with its judge.
	_, doc = f.get(fmt.Sprintf("/runs/%d", id))
	if got := doc.Find("#rejudge-judge").Text(); !strings.Contains(got, "model: lenient-model") {
		t.Fatalf("the form to judge again starts with %q, want the run's judge", got)
	}
	_, doc = f.browser.postForm(fmt.Sprintf("/runs/%d/rejudge", id), url.Values{"judge": {fmt.Sprintf("judge: {model: strict-model, base_url: %q}\n", f.fake.URL)}})
	if got := doc.Find("#run-rejudged").Text(); !strings.Contains(got, fmt.Sprintf("run %d", id)) {
		t.Errorf("the form led to a page that says %q of its answers", got)
	}
}
