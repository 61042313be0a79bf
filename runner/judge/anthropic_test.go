package judge

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"assay/runner/llm"
	"assay/runner/llm/anthropictest"
)

// TestRubricJudgeOnAnthropic judges through the Messages API: the rubric's
// schema is a forced tool call's input, temperature is pinned, a malformed
// answer is corrected, a 429 waits as Retry-After says.
func TestRubricJudgeOnAnthropic(t *testing.T) {
	var answer map[string]any
	json.Unmarshal([]byte(rubricAnswer(5, 4, 3, "Peano showed it")), &answer)
	badAnswer := map[string]any{}
	for k, v := range answer {
		badAnswer[k] = v
	}
	badAnswer["completeness"] = 7
	srv := anthropictest.New(func(req *anthropictest.Request) anthropictest.Reply {
		switch req.Index {
		case 0:
			return anthropictest.Reply{Status: 429, RetryAfter: "3", Text: "rate limited"}
		case 1:
			return anthropictest.Reply{ToolUses: []anthropictest.ToolUse{{Name: "answer", Input: badAnswer}}}
		}
		return anthropictest.Reply{ToolUses: []anthropictest.ToolUse{{Name: "answer", Input: answer}}}
	})
	defer srv.Close()
	var waited []time.Duration
	zero := 0.0
	cfg := llm.Config{Provider: llm.ProviderAnthropic, BaseURL: srv.URL, APIKey: "k", Model: "claude-opus-4-5", Temperature: &zero}
	cfg.Retry.Sleep = func(ctx context.Context, d time.Duration) error { waited = append(waited, d); return ctx.Err() }
	v, err := (&Rubric{Client: llm.New(cfg, nil)}).Judge(context.Background(), sample)
	if err != nil {
		t.Fatal(err)
	}
	checkRubricJudgement(t, v)
	if v.Attempts != 2 || !v.Structured || len(waited) != 1 || waited[0] != 3*time.Second {
		t.Errorf("attempts %d, structured %v, waits %v; want 2 answers, structured, one wait of 3s", v.Attempts, v.Structured, waited)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	for _, r := range reqs {
		if r.Temperature == nil || *r.Temperature != 0 || !r.HasTool("answer") || !strings.Contains(string(r.ToolChoice), `"name":"answer"`) {
			t.Errorf("request %d: temperature %v, tool choice %s", r.Index, r.Temperature, r.ToolChoice)
		}
	}
	if last := reqs[2].LastUser(); !strings.Contains(last, "completeness: 7 is outside 1–5") {
		t.Errorf("the correction does not name the problem: %q", last)
	}
	var schema map[string]any
	for _, tool := range reqs[0].Tools {
		if tool.Name == "answer" {
			json.Unmarshal(tool.InputSchema, &schema)
		}
	}
	props, _ := schema["properties"].(map[string]any)
	if _, ok := props["completeness_reasoning"]; !ok || schema["type"] != "object" {
		t.Errorf("the answer tool's schema is not the rubric's: %v", schema)
	}
}
