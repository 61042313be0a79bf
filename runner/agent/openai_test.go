package agent_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"assay"
	"assay/runner/agent"
	"assay/runner/agent/internal/mcptest"
	"assay/runner/llm/llmtest"
)

func TestOpenAIAgentRecordsTheToolTrace(t *testing.T) {
	tests := []struct {
		name   string
		server func(t *testing.T) assay.MCPServer
	}{
		{"stdio", func(t *testing.T) assay.MCPServer { return mcptest.StdioServer(t, "docs") }},
		{"streamable http", func(t *testing.T) assay.MCPServer {
			return mcptest.ServeHTTP(t, "docs", assay.TransportHTTP, nil).Config
		}},
		{"sse", func(t *testing.T) assay.MCPServer {
			return mcptest.ServeHTTP(t, "docs", assay.TransportSSE, nil).Config
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mcptest.NoOrphans(t)
			srv := tt.server(t)
			a, model := newOpenAI(t, toolModel("echo", `{"message":"hello"}`), agent.OpenAIOptions{})
			cond := assay.Condition{Name: "with_docs", SystemPrompt: "Use the tools.", MCPServers: []assay.MCPServer{srv}, RequireMCPToolUse: true}
			ans, err := a.Answer(context.Background(), agent.Task{Condition: cond, Prompt: "Say hello."})
			if err != nil {
				t.Fatal(err)
			}
			want := `[{"turn":1,"server":"docs","tool":"echo","arguments":{"message":"hello"},"result":"docs: hello","is_error":false,"duration_ms":0}]`
			if got := trace(ans.ToolCalls); got != want {
				t.Errorf("tool calls = %s\nwant %s", got, want)
			}
			if ans.Content != "The tool said: docs: hello" || ans.Model != "fake-model" {
				t.Errorf("content, model = %q, %q", ans.Content, ans.Model)
			}
			if ans.TokensIn != 20 || ans.TokensOut != 10 || ans.Attempts != 2 {
				t.Errorf("tokens in/out, attempts = %d/%d, %d; want 20/10, 2 (two turns)", ans.TokensIn, ans.TokensOut, ans.Attempts)
			}
			reqs := model.Requests()
			if len(reqs) != 2 || reqs[0].System() != "Use the tools." || !offered(reqs[0], "fail") {
				t.Fatalf("requests = %d, first system %q", len(reqs), reqs[0].System())
			}
			if tool := reqs[1].Messages[len(reqs[1].Messages)-1]; tool.ToolCallID != "call_1" || tool.Content != "docs: hello" {
				t.Errorf("tool message = %+v", tool)
			}
		})
	}
}

func TestOpenAIAgentFeedsToolErrorsBack(t *testing.T) {
	mcptest.NoOrphans(t)
	srv := mcptest.ServeHTTP(t, "docs", assay.TransportHTTP, nil).Config
	tests := []struct {
		name, tool, args, want string
	}{
		{"error result", "fail", `{}`, "the fail tool always fails"},
		{"unknown tool", "search", `{}`, `unknown tool \"search\"`},
		{"timeout", "slow", `{"ms":5000}`, "timed out after 200ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			model := func(req *llmtest.ChatRequest) llmtest.Reply {
				if last := req.Messages[len(req.Messages)-1]; last.Role == openai.ChatMessageRoleTool {
					return llmtest.Reply{Content: "The tool said: " + last.Content}
				}
				return llmtest.Reply{ToolCalls: []openai.ToolCall{{Function: openai.FunctionCall{Name: tt.tool, Arguments: tt.args}}}}
			}
			a, _ := newOpenAI(t, model, agent.OpenAIOptions{ToolTimeout: 200 * time.Millisecond})
			ans, err := a.Answer(context.Background(), agent.Task{Condition: assay.Condition{Name: "c", MCPServers: []assay.MCPServer{srv}}, Prompt: "q"})
			if err != nil {
				t.Fatal(err)
			}
			if len(ans.ToolCalls) != 1 || !ans.ToolCalls[0].IsError || !strings.Contains(trace(ans.ToolCalls), tt.want) {
				t.Errorf("tool calls = %s, want one error mentioning %s", trace(ans.ToolCalls), tt.want)
			}
			if !strings.Contains(ans.Content, strings.ReplaceAll(tt.want, `\"`, `"`)) {
				t.Errorf("content = %q: the model did not read the error", ans.Content)
			}
		})
	}
}

func TestOpenAIAgentStopsAfterMaxTurns(t *testing.T) {
	mcptest.NoOrphans(t)
	srv := mcptest.ServeHTTP(t, "docs", assay.TransportHTTP, nil).Config
	loop := func(*llmtest.ChatRequest) llmtest.Reply {
		return llmtest.Reply{ToolCalls: []openai.ToolCall{{Function: openai.FunctionCall{Name: "echo", Arguments: `{"message":"again"}`}}},
			PromptTokens: 7, CompletionTokens: 3}
	}
	a, model := newOpenAI(t, loop, agent.OpenAIOptions{MaxTurns: 3})
	spent, err := a.Answer(context.Background(), agent.Task{Condition: assay.Condition{Name: "c", MCPServers: []assay.MCPServer{srv}}, Prompt: "q"})
	var limit *agent.TurnLimitError
	if !errors.As(err, &limit) || err.Error() != "agent: no final answer after 3 turns" {
		t.Fatalf("err = %v, want the turn limit", err)
	}
	if spent == nil || spent.TokensIn != 21 || len(spent.ToolCalls) != 3 || spent.ToolCalls[2].Turn != 3 {
		t.Errorf("partial answer = %+v, want 21 tokens in and 3 tool calls", spent)
	}
	if n := model.Stats().Requests; n != 3 {
		t.Errorf("model calls = %d, want 3", n)
	}
}

func TestOpenAIAgentNamesAServerThatCannotStart(t *testing.T) {
	mcptest.NoOrphans(t)
	a, model := newOpenAI(t, llmtest.Text("never asked"), agent.OpenAIOptions{})
	cond := assay.Condition{Name: "c", MCPServers: []assay.MCPServer{{Name: "graph", Transport: assay.TransportStdio, Command: "/nonexistent/graph-mcp"}}}
	_, err := a.Answer(context.Background(), agent.Task{Condition: cond, Prompt: "q"})
	if err == nil || !strings.Contains(err.Error(), "mcp server graph") {
		t.Errorf("err = %v, want it to name the server", err)
	}
	if n := model.Stats().Requests; n != 0 {
		t.Errorf("model calls = %d, want none", n)
	}
}

func TestOpenAIAgentSharesServersAndClosesThem(t *testing.T) {
	mcptest.NoOrphans(t)
	srv := mcptest.StdioServer(t, "local")
	a, _ := newOpenAI(t, toolModel("pid", `{}`), agent.OpenAIOptions{})
	cond := assay.Condition{Name: "c", MCPServers: []assay.MCPServer{srv}}
	results := make([]string, 6)
	var wg sync.WaitGroup
	for i := range results {
		wg.Go(func() {
			ans, err := a.Answer(context.Background(), agent.Task{Condition: cond, Prompt: "pid?"})
			if err != nil {
				t.Error(err)
				return
			}
			results[i] = ans.Content
		})
	}
	wg.Wait()
	for _, r := range results {
		if r == "" || r != results[0] {
			t.Fatalf("answers = %q, want one server for all tasks", results)
		}
	}
}

func TestOpenAIAgentCancelledMidCallLeavesNoProcess(t *testing.T) {
	mcptest.NoOrphans(t)
	srv := mcptest.StdioServer(t, "local")
	a, _ := newOpenAI(t, toolModel("slow", `{"ms":10000}`), agent.OpenAIOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	_, err := a.Answer(ctx, agent.Task{Condition: assay.Condition{Name: "c", MCPServers: []assay.MCPServer{srv}}, Prompt: "q"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want the deadline", err)
	}
}

// What the model says with its tool calls ("I will look this up.") is part
// of the transcript: kept on the turn's first call, not on the others.
func TestOpenAIAgentKeepsWhatTheModelSaysBeforeItsCalls(t *testing.T) {
	mcptest.NoOrphans(t)
	srv := mcptest.StdioServer(t, "docs")
	model := func(req *llmtest.ChatRequest) llmtest.Reply {
		if last := req.Messages[len(req.Messages)-1]; last.Role == openai.ChatMessageRoleTool {
			return llmtest.Reply{Content: "Done."}
		}
		call := func(id, msg string) openai.ToolCall {
			return openai.ToolCall{ID: id, Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: "echo", Arguments: `{"message":"` + msg + `"}`}}
		}
		return llmtest.Reply{Content: "I will look this up.", ToolCalls: []openai.ToolCall{call("a", "one"), call("b", "two")}}
	}
	a, _ := newOpenAI(t, model, agent.OpenAIOptions{})
	cond := assay.Condition{Name: "docs", MCPServers: []assay.MCPServer{srv}}
	ans, err := a.Answer(context.Background(), agent.Task{Condition: cond, Prompt: "Look it up."})
	if err != nil {
		t.Fatal(err)
	}
	if len(ans.ToolCalls) != 2 || ans.ToolCalls[0].Thought != "I will look this up." || ans.ToolCalls[1].Thought != "" || ans.Content != "Done." {
		t.Errorf("tool calls %+v, answer %q", ans.ToolCalls, ans.Content)
	}
}
