package runner_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"assay/config"
	"assay/store"
	"assay/tally"
)

// agentScript writes an executable shell script and returns its path.
func agentScript(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "agent.sh")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// commandConfig is a run of one sample under a guarded condition whose
// agent is command (a YAML list).
func (f *fixture) commandConfig(command, extra string) *config.Config {
	f.t.Helper()
	yaml := fmt.Sprintf(`dataset: {path: %q}
agent: {type: command, command: %s, timeout_seconds: 1}
judge: {model: judge-model, base_url: %q}
mcp_servers: {docs: {type: http, url: "http://127.0.0.1:9/mcp"}}
conditions: {guarded: {mcp_servers: [docs], require_mcp_tool_use: true}}
execution: {num_repetitions: 1, retry: {max_attempts: 3}}
%s`, f.qaDataset(1), command, f.srv.URL, extra)
	cfg, err := config.Parse([]byte(yaml), "run.yaml", f.dir, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	return cfg
}

func TestAGuardThatCannotSeeIsRefusedBeforeTheRun(t *testing.T) {
	f := newFixture(t, rubricJudge())
	for _, command := range []string{`[claude, -p, --output-format, json]`, `[./my-agent.sh]`, `[claude, -p, --output-format, stream-json]`} {
		_, err := f.m.CreateFromConfig(context.Background(), f.commandConfig(command, ""))
		if err == nil || !strings.Contains(err.Error(), "conditions.guarded: its guards judge the agent's MCP tool calls") ||
			!strings.Contains(err.Error(), "--output-format stream-json --verbose") {
			t.Errorf("%s: %v", command, err)
		}
	}
	if runs, _ := tally.Of(f.db).Runs(context.Background()); len(runs) != 0 {
		t.Errorf("%d runs stored", len(runs))
	}
}

// A slow agent gets its full timeout on every attempt a guard asks for, and
// running out is a timeout with the time it took, not a cancellation.
func TestEveryAttemptHasItsOwnTimeout(t *testing.T) {
	f := newFixture(t, rubricJudge())
	// 0.6 s an answer without a tool call: three attempts take 1.8 s, within 1 s each.
	slow := agentScript(t, `sleep 0.6; echo '{"type":"result","subtype":"success","is_error":false,"result":"4","usage":{"input_tokens":5,"output_tokens":1}}'`)
	run := f.launch(f.commandConfig(fmt.Sprintf("[%s, --output-format, stream-json, --verbose]", slow), ""))
	if _, err := f.m.Execute(context.Background(), run.ID); err != nil {
		t.Fatal(err)
	}
	r := results(t, f.db, run.ID)[0]
	if r.ErrorKind != store.ErrorGuard || r.Error != "guard require_mcp_tool_use: the agent made no MCP tool call in 3 attempts" || r.Attempts != 3 {
		t.Errorf("three slow attempts: %q (%s), %d attempts", r.Error, r.ErrorKind, r.Attempts)
	}
	if r.Response != "4" {
		t.Errorf("the last attempt's answer is kept with the guard's error: %q", r.Response)
	}

	hang := agentScript(t, `sleep 30`)
	run = f.launch(f.commandConfig(fmt.Sprintf("[%s, --output-format, stream-json, --verbose]", hang), ""))
	if _, err := f.m.Execute(context.Background(), run.ID); err != nil {
		t.Fatal(err)
	}
	r = results(t, f.db, run.ID)[0]
	// The time it took is recorded: about the timeout (the clock of the process starts a little after the deadline's).
	if r.ErrorKind != store.ErrorTimeout || !strings.Contains(r.Error, "timed out after 1s") || r.LatencyMS < 500 || r.Attempts != 1 {
		t.Errorf("a hanging attempt: %q (%s), %d ms, %d attempts", r.Error, r.ErrorKind, r.LatencyMS, r.Attempts)
	}
}

// Claude Code is given its own variables from the environment — its
// provider (Vertex AI: CLAUDE_CODE_USE_VERTEX, CLOUD_ML_REGION, the
// project), proxies, switches — and those agent.env names, but never the
// judge's key or assay's own token; the run's page names what it was given.
func TestClaudeCodeIsGivenItsOwnEnvironment(t *testing.T) {
	f := newFixture(t, rubricJudge())
	dump := filepath.Join(t.TempDir(), "env")
	claude := agentScript(t, "env > "+dump+"\n"+`echo '{"type":"result","subtype":"success","is_error":false,"result":"Rome.","num_turns":1}'`)
	for name, value := range map[string]string{
		"CLAUDE_CODE_USE_VERTEX": "1", "CLOUD_ML_REGION": "us-east5", "ANTHROPIC_VERTEX_PROJECT_ID": "sre-evals",
		"DISABLE_PROMPT_CACHING": "1", "VERTEX_REGION_CLAUDE_4_5_SONNET": "europe-west1", "HTTPS_PROXY": "http://proxy:3128",
		"TEAM_TOOLING_HOME": "/opt/tooling", "JUDGE_KEY": "sk-judge-secret-0123", "ASSAY_TOKEN": "owner-token-0123456789",
		"ANTHROPIC_API_KEY": "",
	} {
		t.Setenv(name, value)
	}
	yaml := fmt.Sprintf(`dataset: {path: %q}
agent: {type: claude_code, model: claude-sonnet-4-5, command: [%q], env: [TEAM_TOOLING_HOME]}
judge: {model: judge-model, base_url: %q, api_key_env: JUDGE_KEY}
conditions: {plain: {}}
execution: {num_repetitions: 1}
`, f.qaDataset(1), claude, f.srv.URL)
	cfg, err := config.Parse([]byte(yaml), "run.yaml", f.dir, os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	run := f.launch(cfg)
	if status, err := f.m.Execute(context.Background(), run.ID); err != nil || status != store.RunCompleted {
		t.Fatalf("%s %v", status, err)
	}
	raw, err := os.ReadFile(dump)
	if err != nil {
		t.Fatal(err)
	}
	env := string(raw)
	for _, want := range []string{"CLAUDE_CODE_USE_VERTEX=1", "CLOUD_ML_REGION=us-east5", "ANTHROPIC_VERTEX_PROJECT_ID=sre-evals",
		"DISABLE_PROMPT_CACHING=1", "VERTEX_REGION_CLAUDE_4_5_SONNET=europe-west1", "HTTPS_PROXY=http://proxy:3128", "TEAM_TOOLING_HOME=/opt/tooling"} {
		if !strings.Contains(env, want+"\n") {
			t.Errorf("Claude Code was not given %s", want)
		}
	}
	for _, secret := range []string{"sk-judge-secret", "owner-token", "JUDGE_KEY", "ASSAY_TOKEN"} {
		if strings.Contains(env, secret) {
			t.Errorf("Claude Code was given %s", secret)
		}
	}
	stored, _ := f.db.Run(context.Background(), run.ID)
	snap := stored.Config
	got := " " + strings.Join(snap.Agent.Passed, " ") + " "
	for _, name := range []string{"ANTHROPIC_VERTEX_PROJECT_ID", "CLAUDE_CODE_USE_VERTEX", "CLOUD_ML_REGION", "DISABLE_PROMPT_CACHING",
		"HTTPS_PROXY", "TEAM_TOOLING_HOME", "VERTEX_REGION_CLAUDE_4_5_SONNET"} {
		if !strings.Contains(got, " "+name+" ") {
			t.Errorf("the run does not record it gave %s: %q", name, got)
		}
	}
	if strings.Contains(got, "JUDGE_KEY") || strings.Contains(got, "ASSAY_TOKEN") || strings.Contains(got, "=") {
		t.Errorf("the run records %q", got)
	}
}
