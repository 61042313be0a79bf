package agent_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"assay"
	"assay/internal/fixture"
	"assay/runner/agent"
)

// claudeOutput runs a command that prints a captured Claude Code output
// (testdata/claude) and exits with code, and returns what the agent made of it.
func claudeOutput(t *testing.T, name string, edit func(string) string, code string) (*agent.Answer, error) {
	t.Helper()
	out := string(fixture.Read(t, "claude/"+name))
	if edit != nil {
		out = edit(out)
	}
	file := filepath.Join(t.TempDir(), "out")
	if err := os.WriteFile(file, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	cond := assay.Condition{Name: "with_everything", MCPServers: []assay.MCPServer{{Name: "everything", Transport: assay.TransportStdio, Command: "node"}}}
	a := agent.NewCommand(agent.CommandOptions{Argv: []string{script(t, `cat "$1"; exit `+code), file}, Getenv: env(nil)})
	return a.Answer(context.Background(), agent.Task{Condition: cond, Prompt: "What is 2 + 2?"})
}

// What Claude Code writes before an MCP tool call, in the same message
// (stream-json gives each block as an event of its own), is kept as the
// call's thought; the answer after the result is not.
func TestClaudeCodeKeepsWhatItSaysBeforeACall(t *testing.T) {
	before := `{"type":"assistant","message":{"content":[{"text":"I will echo it first.","type":"text"}],"id":"msg_0000","model":"claude-sonnet-4-5-20250929","role":"assistant","type":"message"},"parent_tool_use_id":null,"session_id":"s"}`
	ans, err := claudeOutput(t, "mcp-stream.jsonl", func(out string) string {
		i := strings.Index(out, `{"type":"assistant"`)
		return out[:i] + before + "\n" + out[i:]
	}, "0")
	if err != nil {
		t.Fatal(err)
	}
	if len(ans.ToolCalls) != 1 || ans.ToolCalls[0].Thought != "I will echo it first." || ans.Content != "It is 4." {
		t.Errorf("tool calls %+v, answer %q", ans.ToolCalls, ans.Content)
	}
}

func TestClaudeCodeCapturedOutputs(t *testing.T) {
	t.Run("stream-json with an MCP call, cache tokens and a dated model", func(t *testing.T) {
		ans, err := claudeOutput(t, "mcp-stream.jsonl", nil, "0")
		if err != nil {
			t.Fatal(err)
		}
		if ans.Content != "It is 4." || ans.Model != "claude-sonnet-4-5-20250929" || ans.TokensIn != 7500 || ans.TokensOut != 52 ||
			ans.CacheReadTokens != 3000 || ans.CacheWriteTokens != 3000 || ans.ReportedCostUSD == nil || *ans.ReportedCostUSD != 0.017429999999999998 {
			t.Errorf("answer %+v", ans)
		}
		if len(ans.ToolCalls) != 1 || ans.ToolCalls[0].Server != "everything" || ans.ToolCalls[0].Tool != "echo" ||
			ans.ToolCalls[0].Result != "Echo: 2 + 2" || ans.ToolCalls[0].DurationMS != 52 {
			t.Errorf("tool calls %+v, want the echo with the 52 ms between its events", ans.ToolCalls)
		}
	})
	t.Run("json: the model from its usage", func(t *testing.T) {
		ans, err := claudeOutput(t, "mcp-json.json", nil, "0")
		if err != nil || ans.Content != "It is 4." || ans.Model != "claude-sonnet-4-5" || len(ans.ToolCalls) != 0 {
			t.Errorf("answer %+v, %v", ans, err)
		}
	})
	t.Run("a permission denial mid-run", func(t *testing.T) {
		ans, err := claudeOutput(t, "denied-stream.jsonl", nil, "0")
		if err != nil || ans.Content != "It is 4." || len(ans.ToolCalls) != 2 || ans.Turns != 3 {
			t.Fatalf("answer %+v, %v", ans, err)
		}
		// The refused Bash call, on its turn with its command and Claude
		// Code's message, once; then the echo.
		denied, echo := ans.ToolCalls[0], ans.ToolCalls[1]
		if denied.Tool != "Bash" || denied.Server != "" || !denied.Denied || !denied.IsError || denied.Turn != 1 ||
			!strings.Contains(string(denied.Arguments), "curl -X POST") || !strings.HasPrefix(denied.Result, "Permission to use Bash has been denied") {
			t.Errorf("the denial: %+v", denied)
		}
		if echo.Tool != "echo" || echo.Denied || echo.IsError || echo.Turn != 2 {
			t.Errorf("the echo: %+v", echo)
		}
	})
	t.Run("a permission denial in the result alone", func(t *testing.T) {
		last := func(s string) string {
			lines := strings.Split(strings.TrimSpace(s), "\n")
			return lines[len(lines)-1] + "\n"
		}
		ans, err := claudeOutput(t, "denied-stream.jsonl", last, "0")
		if err != nil || len(ans.ToolCalls) != 1 || ans.ToolCalls[0].Tool != "Bash" || !ans.ToolCalls[0].Denied ||
			!strings.Contains(string(ans.ToolCalls[0].Arguments), "curl -X POST") {
			t.Errorf("answer %+v, %v", ans, err)
		}
	})
	t.Run("lines that are not events", func(t *testing.T) {
		noise := func(s string) string {
			return strings.Replace(s, "\n", "\nWarning: something odd\n{\"type\":\"system\",\"subtype\":\"new_kind\",\"message\":42}\n", 2)
		}
		ans, err := claudeOutput(t, "mcp-stream.jsonl", noise, "0")
		if err != nil || ans.Content != "It is 4." || len(ans.ToolCalls) != 1 {
			t.Errorf("answer %+v, %v", ans, err)
		}
	})
	for _, name := range []string{"api-error-stream.jsonl", "api-error.json"} {
		t.Run("an API error, exit 1: "+name, func(t *testing.T) {
			ans, err := claudeOutput(t, name, nil, "1")
			var model *agent.ModelError
			if !errors.As(err, &model) || model.Status != 400 ||
				err.Error() != "agent: claude code: API Error: 400 max_tokens: 999999 > 64000, which is the maximum allowed" {
				t.Fatalf("err = %v", err)
			}
			if ans == nil || ans.Content != "" {
				t.Errorf("an error's answer keeps no content: %+v", ans)
			}
		})
	}
	t.Run("a stream cut short", func(t *testing.T) {
		cut := func(s string) string { return s[:strings.LastIndex(strings.TrimSpace(s), "\n")] }
		ans, err := claudeOutput(t, "mcp-stream.jsonl", cut, "0")
		if err == nil || !strings.Contains(err.Error(), "ended without a result event") || ans.Content != "" || len(ans.ToolCalls) != 1 {
			t.Errorf("answer %+v, %v: want an error, never the stream as the answer", ans, err)
		}
	})
}
