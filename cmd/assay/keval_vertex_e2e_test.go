package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"assay/internal/fixture"
	"assay/runner/llm/anthropictest"
	"assay/runner/llm/googletest"
)

// k-eval's own set-up, as its documentation gives it, runs unchanged: its
// example file pre_test1-ask_sre.yaml — Claude Code on Vertex AI as the
// agent, a vertex_ai/claude-opus-4-5 judge — changed only by a
// judge.base_url naming a fake Vertex's host, as a proxy would, with only
// the variables k-eval documents set (and Claude Code's own
// ANTHROPIC_VERTEX_BASE_URL and CLAUDE_CODE_SKIP_VERTEX_AUTH to reach the
// fake). The real Claude Code calls the file's MCP server (the reference
// server on 127.0.0.1:8001, as the file names it) through the fake model,
// and the judge's calls carry a token, the project and the region.
func TestKEvalsOwnSetUpRunsUnchanged(t *testing.T) {
	data := fixture.ReadShared(t, "k-eval/pre_test1-ask_sre.yaml")
	questions := fixture.ReadShared(t, "k-eval/pre_test1_questions.jsonl")
	claude := fixture.ClaudeCode(t)
	node, script := fixture.Everything(t)

	// The file's MCP server: the reference server over HTTP at 127.0.0.1:8001/mcp.
	mcp := exec.Command(node, script, "streamableHttp")
	mcp.Env = append(os.Environ(), "PORT=8001")
	var mcpLog bytes.Buffer
	mcp.Stdout, mcp.Stderr = &mcpLog, &mcpLog
	if err := mcp.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mcp.Process.Kill(); mcp.Wait() })
	for deadline := time.Now().Add(30 * time.Second); ; {
		if c, err := net.Dial("tcp", "127.0.0.1:8001"); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the MCP server did not listen on 8001: %s", mcpLog.String())
		}
		time.Sleep(50 * time.Millisecond)
	}

	// One fake Vertex serves both: Claude Code's model and the judge.
	vertex := anthropictest.New(func(req *anthropictest.Request) anthropictest.Reply {
		if req.HasTool("answer") {
			return anthropictest.Reply{ToolUses: []anthropictest.ToolUse{{Name: "answer", Input: map[string]any{
				"factual_adherence": 4, "factual_adherence_reasoning": "matches", "completeness": 4, "completeness_reasoning": "most",
				"helpfulness_and_clarity": 5, "helpfulness_and_clarity_reasoning": "clear", "unverified_claims": []string{}}}}}
		}
		for _, name := range req.ToolNames() {
			if strings.HasPrefix(name, "mcp__ask_sre__") && len(req.ToolResults()) == 0 && strings.HasSuffix(name, "__echo") {
				return anthropictest.Reply{ToolUses: []anthropictest.ToolUse{{Name: name, Input: map[string]any{"message": "network verifier"}}}}
			}
		}
		return anthropictest.Reply{Text: "Run osdctl network verify-egress against the cluster."}
	})
	defer vertex.Close()

	dir := t.TempDir()
	cfg := strings.Replace(string(data), `model: "vertex_ai/claude-opus-4-5"`,
		fmt.Sprintf(`model: "vertex_ai/claude-opus-4-5"`+"\n  base_url: %q", vertex.URL), 1)
	if cfg == string(data) {
		t.Fatal("the judge's model line is not in the file")
	}
	os.WriteFile(filepath.Join(dir, "pre_test1-ask_sre.yaml"), []byte(cfg), 0o644)
	os.WriteFile(filepath.Join(dir, "pre_test1_questions.jsonl"), questions, 0o644)

	tokens := googletest.NewTokenServer(t)
	bin := t.TempDir()
	os.Symlink(claude, filepath.Join(bin, "claude"))
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("TMPDIR", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	for name, value := range map[string]string{
		// k-eval's documented variables (docs/run-configuration.md).
		"CLAUDE_CODE_USE_VERTEX": "1", "CLOUD_ML_REGION": "us-east5", "ANTHROPIC_VERTEX_PROJECT_ID": "sre-evals",
		"DISABLE_PROMPT_CACHING": "1", "GOOGLE_APPLICATION_CREDENTIALS": tokens.ServiceAccountFile(t, dir, "sre-evals"),
		"VERTEXAI_LOCATION": "us-east5", "VERTEXAI_PROJECT": "sre-evals",
		// Claude Code's own, to reach the fake.
		"ANTHROPIC_VERTEX_BASE_URL": vertex.URL + "/v1", "CLAUDE_CODE_SKIP_VERTEX_AUTH": "1",
		"ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": "", "ANTHROPIC_BASE_URL": "",
	} {
		t.Setenv(name, value)
	}
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"run", "--config", filepath.Join(dir, "pre_test1-ask_sre.yaml"), "--db", filepath.Join(dir, "assay.db"),
		"--json", "--quiet"}, &out, &errOut)
	if err != nil {
		t.Fatalf("assay run: %v\n%s\n%s\nrequests elsewhere: %v", err, out.String(), errOut.String(), vertex.Stats().Other)
	}
	var sum struct {
		Status     string
		Conditions []struct {
			Name        string
			Results     int
			Errors      int
			JudgeErrors int `json:"judge_errors"`
			ToolCalls   int `json:"tool_calls"`
			Metrics     []struct{ Name string }
		}
	}
	json.Unmarshal(out.Bytes(), &sum)
	if sum.Status != "completed" || len(sum.Conditions) != 1 {
		t.Fatalf("summary %s", out.String())
	}
	c := sum.Conditions[0]
	if c.Name != "ask_sre" || c.Results != 1 || c.Errors != 0 || c.JudgeErrors != 0 || c.ToolCalls == 0 || len(c.Metrics) != 3 {
		t.Errorf("condition %+v", c)
	}
	var agentCalls, judgeCalls int
	for _, r := range vertex.Requests() {
		if r.Vertex == nil {
			t.Errorf("request %d did not go through Vertex's path", r.Index)
			continue
		}
		if r.Vertex.Project != "sre-evals" || r.Vertex.Location != "us-east5" {
			t.Errorf("request %d: project %q, location %q", r.Index, r.Vertex.Project, r.Vertex.Location)
		}
		if r.HasTool("answer") {
			judgeCalls++
			if auth := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "); !tokens.Issued(auth) || r.Model != "claude-opus-4-5" {
				t.Errorf("judge request %d: token %q, model %q", r.Index, auth, r.Model)
			}
		} else {
			agentCalls++
		}
	}
	if agentCalls < 2 || judgeCalls != 1 {
		t.Errorf("%d agent calls (a tool call, then the answer) and %d judge calls", agentCalls, judgeCalls)
	}
}
