package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"assay/internal/fixture"
	"assay/runner/llm/anthropictest"
	"assay/runner/llm/llmtest"
)

// claudeRunFile is a k-eval style run file (agent.type claude_code_sdk)
// whose Claude Code talks to anthropic and whose judge is judge.
func claudeRunFile(t *testing.T, anthropic, judge string, timeout int, env ...string) (dir, path string) {
	t.Helper()
	dir = t.TempDir()
	node, script := fixture.Everything(t)
	os.WriteFile(filepath.Join(dir, "questions.jsonl"), []byte("{\"question\": \"What is 2 + 2?\", \"answer\": \"4\"}\n{\"question\": \"What is 3 + 3?\", \"answer\": \"6\"}\n"), 0o644)
	yaml := fmt.Sprintf(`name: "claude-eval"
version: "1"
dataset: {path: "./questions.jsonl", question_key: "question", answer_key: "answer"}
agent:
  type: "claude_code_sdk"
  model: "claude-sonnet-4-5"
  command: [%q]
  base_url: %q
  api_key_env: ASSAY_TEST_ANTHROPIC_KEY
  timeout_seconds: %d
  env: {%s}
judge: {model: "judge-model", base_url: %q, temperature: 0.0}
mcp_servers:
  everything: {type: "stdio", command: %q, args: [%q, "stdio"]}
conditions:
  baseline: {mcp_servers: [], system_prompt: "Answer from your own knowledge."}
  with_everything:
    mcp_servers: [everything]
    system_prompt: "Use the tools."
    require_mcp_tool_use: true
execution: {num_repetitions: 1, max_concurrent: 2, retry: {max_attempts: 2, initial_backoff_seconds: 0}}
prices: {claude-sonnet-4-5: {input_per_mtok: 3, output_per_mtok: 15}}
`, fixture.ClaudeCode(t), anthropic, timeout, strings.Join(env, ", "), judge, node, script)
	path = filepath.Join(dir, "run.yaml")
	os.WriteFile(path, []byte(yaml), 0o644)
	return dir, path
}

// echoModel calls the echo tool when it is offered, then answers.
func echoModel(req *anthropictest.Request) anthropictest.Reply {
	asked := 0
	for _, m := range req.Messages {
		if m.Role == "assistant" {
			asked++
		}
	}
	if asked == 0 && req.HasTool("mcp__everything__echo") {
		return anthropictest.Reply{ToolUses: []anthropictest.ToolUse{{Name: "mcp__everything__echo", Input: map[string]any{"message": "4"}}},
			Model: "claude-sonnet-4-5-20250929"}
	}
	return anthropictest.Reply{Text: "It is 4.", Model: "claude-sonnet-4-5-20250929"}
}

func TestAssayRunsAKEvalClaudeCodeConfig(t *testing.T) {
	anthropic := anthropictest.New(echoModel)
	defer anthropic.Close()
	judge := llmtest.New(llmtest.Judge(nil))
	defer judge.Close()
	t.Setenv("ASSAY_TEST_ANTHROPIC_KEY", "sk-ant-test-0123456789")
	t.Setenv("TMPDIR", t.TempDir())
	dir, cfg := claudeRunFile(t, anthropic.URL, judge.URL, 60)
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"run", "--config", cfg, "--db", filepath.Join(dir, "assay.db"), "--json", "--quiet"}, &out, &errOut)
	if err != nil {
		t.Fatalf("assay run: %v\n%s", err, errOut.String())
	}
	var sum struct {
		Status     string
		Conditions []struct {
			Name      string
			Results   int
			Errors    int
			ToolCalls int     `json:"tool_calls"`
			CostUSD   float64 `json:"cost_usd"`
		}
	}
	if err := json.Unmarshal(out.Bytes(), &sum); err != nil {
		t.Fatalf("summary %s: %v", out.String(), err)
	}
	if sum.Status != "completed" || len(sum.Conditions) != 2 {
		t.Fatalf("summary %s", out.String())
	}
	for _, c := range sum.Conditions {
		wantCalls := 0
		if c.Name == "with_everything" {
			wantCalls = 2
		}
		if c.Results != 2 || c.Errors != 0 || c.ToolCalls != wantCalls || c.CostUSD <= 0 {
			t.Errorf("%s: %+v, want 2 results, no error, %d MCP calls and a cost", c.Name, c, wantCalls)
		}
	}
	for _, r := range anthropic.Requests() {
		if r.Header.Get("X-Api-Key") != "sk-ant-test-0123456789" {
			t.Fatalf("Claude Code did not send the run's key: %q", r.Header.Get("X-Api-Key"))
		}
	}
}

// A killed assay leaves the MCP config of its Claude Code task behind (it
// cannot remove it); the next start removes it, and Claude Code died with assay.
func TestMCPConfigOfAKilledRunIsRemovedAtTheNextStart(t *testing.T) {
	bin := buildBinary(t)
	anthropic := anthropictest.New(func(*anthropictest.Request) anthropictest.Reply { return anthropictest.Reply{Hang: true} })
	defer anthropic.Close()
	judge := llmtest.New(llmtest.Judge(nil))
	defer judge.Close()
	tmp := t.TempDir()
	mark := fmt.Sprintf("assay-test-%d", time.Now().UnixNano())
	dir, cfg := claudeRunFile(t, anthropic.URL, judge.URL, 120, "ASSAY_TEST_MARK: "+mark)
	dbPath := filepath.Join(dir, "assay.db")
	cmd := exec.Command(bin, "run", "--quiet", "--config", cfg, "--db", dbPath)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "ASSAY_TEST_ANTHROPIC_KEY=sk-ant-test")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	configs := filepath.Join(tmp, fmt.Sprintf("assay-mcp-%d", os.Getuid()), "*.json")
	deadline := time.Now().Add(60 * time.Second)
	for anthropic.Stats().Requests == 0 {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("Claude Code never called the model")
		}
		time.Sleep(20 * time.Millisecond)
	}
	left, _ := filepath.Glob(configs)
	if len(left) == 0 {
		t.Fatal("no MCP config file while Claude Code works")
	}
	if len(marked(mark)) == 0 {
		t.Fatal("no running process carries the run's agent.env mark")
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	for deadline := time.Now().Add(10 * time.Second); len(marked(mark)) > 0 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
	if pids := marked(mark); len(pids) > 0 {
		t.Errorf("Claude Code outlived the killed assay: pids %v", pids)
	}
	resume := exec.Command(bin, "run", "--quiet", "--resume", "1", "--db", dbPath)
	resume.Env = append(os.Environ(), "TMPDIR="+tmp, "ASSAY_TEST_ANTHROPIC_KEY=sk-ant-test")
	if err := resume.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { resume.Process.Signal(syscall.SIGKILL); resume.Wait() }()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		still := 0
		for _, f := range left {
			if _, err := os.Stat(f); err == nil {
				still++
			}
		}
		if still == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d MCP config files of the killed run remain after a restart", still)
		}
	}
}

// marked lists the processes whose environment holds mark.
func marked(mark string) []string {
	var out []string
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		if env, err := os.ReadFile(filepath.Join(d, "environ")); err == nil && bytes.Contains(env, []byte("ASSAY_TEST_MARK="+mark)) {
			out = append(out, filepath.Base(d))
		}
	}
	return out
}
