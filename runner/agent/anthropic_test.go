package agent_test

import (
	"context"
	"os"
	"testing"

	"assay"
	"assay/runner/agent"
	"assay/runner/agent/internal/mcptest"
	"assay/runner/llm"
	"assay/runner/llm/anthropictest"
)

// TestAnthropicAgentUsesMCPTools runs the built-in tool loop over the
// Messages API: the reference server's echo tool is offered, called and its
// result sent back as a tool_result, and the guard sees the call.
func TestAnthropicAgentUsesMCPTools(t *testing.T) {
	mcptest.NoOrphans(t)
	srv := anthropictest.New(func(req *anthropictest.Request) anthropictest.Reply {
		if res := req.ToolResults(); len(res) > 0 {
			return anthropictest.Reply{Text: "The tool said: " + res[0].ResultText(), Model: "claude-sonnet-4-5-20250929",
				Usage: anthropictest.Usage{InputTokens: 50, OutputTokens: 10, CacheReadInputTokens: 200}}
		}
		if !req.HasTool("echo") {
			return anthropictest.Reply{Text: "I have no echo tool."}
		}
		return anthropictest.Reply{ToolUses: []anthropictest.ToolUse{{Name: "echo", Input: map[string]any{"message": "hello"}}},
			Usage: anthropictest.Usage{InputTokens: 40, OutputTokens: 8}}
	})
	defer srv.Close()
	client := llm.New(llm.Config{Provider: llm.ProviderAnthropic, BaseURL: srv.URL, APIKey: "k", Model: "claude-sonnet-4-5"}, nil)
	a := agent.NewOpenAI(client, agent.OpenAIOptions{MaxTurns: 4, Getenv: os.Getenv})
	defer a.Close()
	node, script := everything(t)
	cond := assay.Condition{Name: "with_everything", RequireMCPToolUse: true, RequireMCPToolSuccess: true,
		MCPServers: []assay.MCPServer{{Name: "everything", Transport: assay.TransportStdio, Command: node, Args: []string{script, "stdio"}}}}
	ans, err := agent.Guarded(a, 2, 0).Answer(context.Background(), agent.Task{Condition: cond, Prompt: "Echo hello."})
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"turn":1,"server":"everything","tool":"echo","arguments":{"message":"hello"},"result":"Echo: hello","is_error":false,"duration_ms":0}]`
	if got := trace(ans.ToolCalls); got != want || ans.Content != "The tool said: Echo: hello" {
		t.Errorf("answer %q, tool calls %s\nwant %s", ans.Content, got, want)
	}
	if ans.Model != "claude-sonnet-4-5-20250929" || ans.TokensIn != 290 || ans.TokensOut != 18 || ans.CacheReadTokens != 200 {
		t.Errorf("model %q, tokens in %d (cache %d), out %d; want the dated model, 290 (200), 18", ans.Model, ans.TokensIn, ans.CacheReadTokens, ans.TokensOut)
	}
}
