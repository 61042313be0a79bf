package web_test

import (
	"fmt"
	"testing"
	"time"

	"assay"
	"assay/runner/llm/llmtest"
	"assay/web"
)

// A replay longer than the Routing page waits: the page says it is under
// way and fetches itself again until the figures are in.
func TestRoutingPageWaitsForALongReplay(t *testing.T) {
	agent := func(req *llmtest.ChatRequest) llmtest.Reply {
		if req.Model == "good-model" {
			return llmtest.Reply{Content: "The answer is B."}
		}
		return llmtest.Reply{Content: "The answer is C."}
	}
	f := newRunServer(t, llmtest.JudgeAndAgent(agent, agent), func(c *web.Config) { c.ReplayWait = -1 })
	ds := f.dataset("mmlu.jsonl", mcqBySubject())
	if err := f.db.CreateCondition(t.Context(), &assay.Condition{Name: "plain", SystemPrompt: "Answer.", MCPServers: []assay.MCPServer{}}); err != nil {
		t.Fatal(err)
	}
	run := map[string]any{"agent": map[string]any{"type": "openai", "base_url": f.fake.URL,
		"models": []map[string]any{{"name": "good", "model": "good-model"}, {"name": "cheap", "model": "cheap-model"}}},
		"evaluators": []string{"exact_match"}, "execution": map[string]any{"num_repetitions": 1}}
	id := f.launchRun(ds, []string{"plain"}, run)

	path := fmt.Sprintf("/runs/%d/routing?orders=2000&seed=7", id)
	_, doc := f.get(path)
	if doc.Find("#routing-pending").Length() != 1 || doc.Find("#routing-table").Length() != 0 {
		t.Fatalf("the first showing of a replay not done: pending %d, table %d", doc.Find("#routing-pending").Length(), doc.Find("#routing-table").Length())
	}
	if got, _ := doc.Find("#routing-replay").Attr("hx-get"); got != path {
		t.Errorf("the page fetches %q again, want %q", got, path)
	}
	deadline := time.Now().Add(2 * time.Minute) // a bound on a failure, not a wait
	for doc.Find("#routing-table").Length() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the replay never came")
		}
		_, doc = f.get(path)
	}
	if n := doc.Find("#routing-table tbody tr").Length(); n != 12 {
		t.Errorf("%d algorithms in the table, want 12", n)
	}
	if _, ok := doc.Find("#routing-replay").Attr("hx-get"); ok {
		t.Error("the page still fetches itself once the replay is in")
	}
	// The exported report waits for its replay (the default settings'),
	// however long the page would not.
	_, doc = f.get(fmt.Sprintf("/runs/%d/export.html", id))
	if n := doc.Find("#routing-table tbody tr").Length(); n != 12 || doc.Find("#routing-pending").Length() != 0 {
		t.Errorf("the exported report carries %d algorithms", n)
	}
}
