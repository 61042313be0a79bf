package runner_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"assay/runner/config"
	"assay/store"
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
	if runs, _ := f.db.Runs(context.Background()); len(runs) != 0 {
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
