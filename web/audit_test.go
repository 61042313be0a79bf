package web_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"assay/runner/llm/llmtest"
)

// paddingJudge scores 3 on each rubric metric, 5 for an answer padded by a
// judge audit; asked to compare two answers, it picks the first.
func paddingJudge(req *llmtest.ChatRequest) llmtest.Reply {
	schema, _, _ := req.Schema()
	props, _ := schema["properties"].(map[string]any)
	if _, ok := props["first_better"]; ok {
		answer, _ := llmtest.JudgeAnswer(req, map[string]any{"first_better": 1})
		return llmtest.Reply{Content: answer}
	}
	score := 3
	if strings.Contains(req.Messages[len(req.Messages)-1].Content, "To put it another way") {
		score = 5
	}
	answer, _ := llmtest.JudgeAnswer(req, map[string]any{"factual_adherence": score, "completeness": score,
		"helpfulness_and_clarity": score, "unverified_claims": []string{}})
	return llmtest.Reply{Content: answer}
}

// The report's Judge audit: its owner starts one from the page, which
// runs in the background; once done the page and GET /api/runs/:id/audit
// give its figures. POST /api/runs/:id/audit starts one too (202 with its
// estimate); a bad number in the form is refused by name.
func TestAuditTheJudgeFromTheReport(t *testing.T) {
	f := newRunServer(t, llmtest.JudgeAndAgent(paddingJudge, llmtest.Text("An answer.")))
	ds := f.qaDataset(5)
	id := f.launch(f.runForm(ds, f.conditions("baseline", "careful")))
	f.waitFor(id, "completed")

	_, doc := f.get(fmt.Sprintf("/runs/%d", id))
	if doc.Find("#audit-form").Length() != 1 || !strings.Contains(text(doc, "#audit-none"), "has not been audited") {
		t.Fatalf("the report's audit section: %q", text(doc, "#judge-audit + p + .panel"))
	}
	_, doc = f.postForm(fmt.Sprintf("/runs/%d/audit", id), url.Values{"samples": {"many"}})
	if got := text(doc, ".flash"); !strings.Contains(got, `Answers: "many" is not a whole number`) {
		t.Errorf("flash for a bad number: %q", got)
	}
	_, doc = f.postForm(fmt.Sprintf("/runs/%d/audit", id), url.Values{"samples": {"4"}})
	if got := text(doc, ".flash"); !strings.Contains(got, "Auditing the judge of run") || !strings.Contains(got, "12 judge calls") {
		t.Errorf("flash: %q", got)
	}
	var got struct {
		Running bool `json:"running"`
		Probes  struct {
			Verbosity *struct {
				Delta float64 `json:"delta"`
				N     int     `json:"n"`
			} `json:"verbosity"`
			Position *struct {
				FlipRate float64 `json:"flip_rate"`
			} `json:"position"`
		} `json:"probes"`
	}
	deadline := time.Now().Add(60 * time.Second)
	for got.Probes.Verbosity == nil || got.Running {
		if time.Now().After(deadline) {
			t.Fatalf("the audit did not end: %+v", got)
		}
		time.Sleep(20 * time.Millisecond)
		got.Probes.Verbosity = nil
		code, body := api(t, f.browser, "GET", fmt.Sprintf("/api/runs/%d/audit", id), "", nil)
		if code == 200 {
			json.Unmarshal([]byte(body), &got)
		}
	}
	if got.Probes.Verbosity.Delta != 2 || got.Probes.Verbosity.N != 4 || got.Probes.Position == nil || got.Probes.Position.FlipRate != 1 {
		t.Errorf("the audit: verbosity %+v, position %+v", got.Probes.Verbosity, got.Probes.Position)
	}
	_, doc = f.get(fmt.Sprintf("/runs/%d", id))
	lines := text(doc, "#audit-lines")
	if !strings.Contains(lines, "moved their scores by +2.00") || !strings.Contains(lines, "100% changed winner with the order") ||
		!strings.Contains(text(doc, "#audit-made"), "12 judge calls") {
		t.Errorf("the report's audit: %q / %q", lines, text(doc, "#audit-made"))
	}
	code, body := api(t, f.browser, "POST", fmt.Sprintf("/api/runs/%d/audit", id), "", map[string]any{"probes": []string{"verbosity"}, "samples": 2})
	if code != 202 || !strings.Contains(body, `"calls":2`) {
		t.Errorf("POST /api/runs/:id/audit: %d %s", code, body)
	}
	if code, body := api(t, f.browser, "POST", fmt.Sprintf("/api/runs/%d/audit", id), "", map[string]any{"probes": []string{"length"}}); code != 422 || !strings.Contains(body, `probe \"length\"`) {
		t.Errorf("an unknown probe: %d %s", code, body)
	}
}
