package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"assay/runner/llm/anthropictest"
)

// TestRunWithClaude runs a file whose agent and judge are Claude models on
// the Messages API, gated: the judge answers through its forced tool, the
// key comes from the named variable, the cost from the dated model's price.
func TestRunWithClaude(t *testing.T) {
	srv := anthropictest.New(func(req *anthropictest.Request) anthropictest.Reply {
		if req.HasTool("answer") {
			return anthropictest.Reply{ToolUses: []anthropictest.ToolUse{{Name: "answer", Input: map[string]any{
				"factual_adherence": 5, "factual_adherence_reasoning": "right", "completeness": 4, "completeness_reasoning": "most",
				"helpfulness_and_clarity": 4, "helpfulness_and_clarity_reasoning": "clear", "unverified_claims": []string{}}}},
				Usage: anthropictest.Usage{InputTokens: 1000, OutputTokens: 100}}
		}
		return anthropictest.Reply{Text: "Rome.", Model: "claude-sonnet-4-5-20250929", Usage: anthropictest.Usage{InputTokens: 1000, OutputTokens: 100}}
	})
	defer srv.Close()
	t.Setenv("CLAUDE_TEST_KEY", "sk-ant-e2e")
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "q.jsonl"), []byte(`{"question": "Capital of Italy?", "answer": "Rome"}
{"question": "Capital of France?", "answer": "Paris"}
`), 0o644)
	cfg := filepath.Join(dir, "run.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf(`name: claude
dataset: {path: ./q.jsonl}
agent: {type: anthropic, model: claude-sonnet-4-5, base_url: %q, api_key_env: CLAUDE_TEST_KEY}
judge: {type: anthropic, model: claude-opus-4-5, base_url: %q, api_key_env: CLAUDE_TEST_KEY}
conditions: {plain: {system_prompt: "Answer briefly."}}
prices:
  claude-sonnet-4-5: {input_per_mtok: 3, output_per_mtok: 15}
  claude-opus-4-5: {input_per_mtok: 5, output_per_mtok: 25}
`, srv.URL, srv.URL)), 0o644)
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"run", "--config", cfg, "--db", filepath.Join(dir, "a.db"), "--quiet", "--json",
		"--gate", "rubric.completeness>=4"}, &out, &errOut)
	if err != nil {
		t.Fatalf("assay run: %v\n%s", err, errOut.String())
	}
	var s struct {
		Results    int
		CostUSD    float64 `json:"cost_usd"`
		Passed     bool
		Conditions []struct {
			Metrics []struct {
				Name string
				Mean float64
			}
		}
	}
	json.Unmarshal(out.Bytes(), &s)
	// 6 answers (2 samples × 3 repetitions) at 1,000 in and 100 out: 6 × $0.0045 = $0.027;
	// 6 judgements at $0.0075 each = $0.045.
	if s.Results != 6 || !s.Passed || s.CostUSD < 0.0719 || s.CostUSD > 0.0721 {
		t.Errorf("results %d, passed %v, cost %v; want 6, true, $0.072\n%s", s.Results, s.Passed, s.CostUSD, out.String())
	}
	for _, r := range srv.Requests() {
		if r.Header.Get("X-Api-Key") != "sk-ant-e2e" {
			t.Errorf("request %d sent key %q", r.Index, r.Header.Get("X-Api-Key"))
		}
	}
}

// A Claude judge's instructions and schema are marked cacheable, and the
// tokens it reads from the prompt cache are counted apart and priced at the
// cache rate: each judgement here costs $0.0039 rather than $0.0075.
func TestClaudeJudgeInstructionsAreCached(t *testing.T) {
	srv := anthropictest.New(func(req *anthropictest.Request) anthropictest.Reply {
		if req.HasTool("answer") {
			return anthropictest.Reply{ToolUses: []anthropictest.ToolUse{{Name: "answer", Input: map[string]any{
				"factual_adherence": 5, "factual_adherence_reasoning": "right", "completeness": 4, "completeness_reasoning": "most",
				"helpfulness_and_clarity": 4, "helpfulness_and_clarity_reasoning": "clear", "unverified_claims": []string{}}}},
				Usage: anthropictest.Usage{InputTokens: 200, CacheReadInputTokens: 800, OutputTokens: 100}}
		}
		return anthropictest.Reply{Text: "Rome.", Usage: anthropictest.Usage{InputTokens: 1000, OutputTokens: 100}}
	})
	defer srv.Close()
	t.Setenv("CLAUDE_TEST_KEY", "sk-ant-e2e")
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "q.jsonl"), []byte(`{"question": "Capital of Italy?", "answer": "Rome"}
{"question": "Capital of France?", "answer": "Paris"}
`), 0o644)
	cfg := filepath.Join(dir, "run.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf(`name: claude
dataset: {path: ./q.jsonl}
agent: {type: anthropic, model: claude-sonnet-4-5, base_url: %q, api_key_env: CLAUDE_TEST_KEY}
judge: {type: anthropic, model: claude-opus-4-5, base_url: %q, api_key_env: CLAUDE_TEST_KEY}
conditions: {plain: {system_prompt: "Answer briefly."}}
execution: {num_repetitions: 1}
prices:
  claude-sonnet-4-5: {input_per_mtok: 3, output_per_mtok: 15}
  claude-opus-4-5: {input_per_mtok: 5, output_per_mtok: 25}
`, srv.URL, srv.URL)), 0o644)
	db := filepath.Join(dir, "a.db")
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"run", "--config", cfg, "--db", db, "--quiet", "--json"}, &out, &errOut); err != nil {
		t.Fatalf("assay run: %v\n%s", err, errOut.String())
	}
	var s struct {
		RunID   int64   `json:"run_id"`
		CostUSD float64 `json:"cost_usd"`
	}
	json.Unmarshal(out.Bytes(), &s)
	// 2 answers at 1,000 in and 100 out at Sonnet's price: 2 × $0.0045;
	// 2 judgements of 200 plain and 800 cached tokens in, 100 out, at
	// Opus's: 2 × (200 × 5 + 800 × 0.5 + 100 × 25) / 1e6 = 2 × $0.0039.
	if want := 2*0.0045 + 2*0.0039; s.CostUSD < want-1e-9 || s.CostUSD > want+1e-9 {
		t.Errorf("cost %v, want $%.4f\n%s", s.CostUSD, want, out.String())
	}
	judged := 0
	for _, r := range srv.Requests() {
		var system []struct {
			Text         string          `json:"text"`
			CacheControl json.RawMessage `json:"cache_control"`
		}
		json.Unmarshal(r.System, &system)
		marked := len(system) > 0 && string(system[len(system)-1].CacheControl) == `{"type":"ephemeral"}`
		if r.HasTool("answer") {
			judged++
			if !marked {
				t.Errorf("judge request %d: its instructions are not marked cacheable: %s", r.Index, r.System)
			}
		} else if marked {
			t.Errorf("agent request %d: the condition's prompt is marked cacheable", r.Index)
		}
	}
	if judged != 2 {
		t.Fatalf("%d judge requests, want 2", judged)
	}
	out.Reset()
	if err := run(context.Background(), []string{"export", "--run", fmt.Sprint(s.RunID), "--format", "json", "--db", db, "-o", "-"}, &out, &errOut); err != nil {
		t.Fatalf("assay export: %v\n%s", err, errOut.String())
	}
	var export struct {
		Results []struct {
			Judgements []struct {
				TokensIn        int `json:"tokens_in"`
				CacheReadTokens int `json:"cache_read_tokens"`
			} `json:"judgements"`
		} `json:"results"`
	}
	if err := json.Unmarshal(out.Bytes(), &export); err != nil || len(export.Results) != 2 {
		t.Fatalf("export: %v (%d results)", err, len(export.Results))
	}
	for _, r := range export.Results {
		if len(r.Judgements) != 1 || r.Judgements[0].TokensIn != 1000 || r.Judgements[0].CacheReadTokens != 800 {
			t.Errorf("judgements exported %+v, want 1,000 tokens in of which 800 read from the cache", r.Judgements)
		}
	}
}
