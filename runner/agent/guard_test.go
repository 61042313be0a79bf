package agent_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"assay"
	"assay/runner/agent"
	"assay/runner/agent/internal/mcptest"
	"assay/runner/llm/llmtest"
	"assay/store"
)

// scripted answers with its answers in order, then repeats the last, or
// fails with err when set.
type scripted struct {
	answers []agent.Answer
	err     error
	calls   int
}

var _ agent.Agent = (*scripted)(nil)

func (s *scripted) Answer(context.Context, agent.Task) (*agent.Answer, error) {
	if s.err != nil && s.calls >= len(s.answers) {
		s.calls++
		return nil, s.err
	}
	a := s.answers[min(s.calls, len(s.answers)-1)]
	s.calls++
	return &a, nil
}

func (s *scripted) Close() error { return nil }

func TestGuards(t *testing.T) {
	none := agent.Answer{Content: "from memory", TokensIn: 10, TokensOut: 2, Attempts: 1}
	failed := agent.Answer{Content: "tried", TokensIn: 10, TokensOut: 2, Attempts: 1,
		ToolCalls: []store.ToolCall{{Turn: 1, Server: "graph", Tool: "query", IsError: true}}}
	unknown := agent.Answer{Content: "made one up", TokensIn: 10, TokensOut: 2, Attempts: 1,
		ToolCalls: []store.ToolCall{{Turn: 1, Tool: "search", IsError: true}}}
	used := agent.Answer{Content: "from the graph", TokensIn: 10, TokensOut: 2, Attempts: 1,
		ToolCalls: []store.ToolCall{{Turn: 1, Server: "graph", Tool: "query", IsError: true}, {Turn: 2, Server: "graph", Tool: "query"}}}
	tests := []struct {
		name          string
		use, success  bool
		answers       []agent.Answer
		wantCalls     int
		wantErr       string
		wantContent   string
		wantTokensIn  int
		wantToolCalls int
	}{
		{"no guard", false, false, []agent.Answer{none}, 1, "", "from memory", 10, 0},
		{"use kept", true, false, []agent.Answer{failed}, 1, "", "tried", 10, 1},
		{"use broken every time", true, false, []agent.Answer{none}, 3,
			"guard require_mcp_tool_use: the agent made no MCP tool call in 3 attempts", "", 30, 0},
		{"an unknown tool is no MCP tool", true, false, []agent.Answer{unknown}, 3,
			"guard require_mcp_tool_use: the agent made no MCP tool call in 3 attempts", "", 30, 1},
		{"use kept on the second attempt", true, false, []agent.Answer{none, used}, 2, "", "from the graph", 20, 2},
		{"success broken every time", false, true, []agent.Answer{failed}, 3,
			"guard require_mcp_tool_success: no MCP tool call of the agent succeeded in 3 attempts", "", 30, 1},
		{"success broken by no call", true, true, []agent.Answer{none}, 3,
			"guard require_mcp_tool_use: the agent made no MCP tool call in 3 attempts", "", 30, 0},
		{"success kept", true, true, []agent.Answer{failed, used}, 2, "", "from the graph", 20, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inner := &scripted{answers: tt.answers}
			cond := assay.Condition{Name: "with_graph", RequireMCPToolUse: tt.use, RequireMCPToolSuccess: tt.success}
			ans, err := agent.Guarded(inner, 3, 0).Answer(context.Background(), agent.Task{Condition: cond, Prompt: "q"})
			if inner.calls != tt.wantCalls {
				t.Errorf("inner answers = %d, want %d", inner.calls, tt.wantCalls)
			}
			if tt.wantErr != "" {
				var g *agent.GuardError
				if !errors.As(err, &g) || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if ans == nil || ans.TokensIn != tt.wantTokensIn || ans.Attempts != tt.wantCalls || len(ans.ToolCalls) != tt.wantToolCalls {
				t.Fatalf("answer = %+v, want %d tokens in, %d attempts, %d tool calls", ans, tt.wantTokensIn, tt.wantCalls, tt.wantToolCalls)
			}
			if tt.wantErr == "" && ans.Content != tt.wantContent {
				t.Errorf("content = %q, want %q", ans.Content, tt.wantContent)
			}
			if retries := strings.Join(ans.Retries, "\n"); tt.wantCalls > 1 && !strings.Contains(retries, "guard require_mcp_tool_") {
				t.Errorf("retries = %q, want the broken guard noted", retries)
			}
		})
	}
}

func TestGuardOverAModelThatNeverCallsATool(t *testing.T) {
	mcptest.NoOrphans(t)
	srv := mcptest.ServeHTTP(t, "graph", assay.TransportHTTP, nil).Config
	a, model := newOpenAI(t, llmtest.Text("I know this one."), agent.OpenAIOptions{})
	cond := assay.Condition{Name: "with_graph", MCPServers: []assay.MCPServer{srv}, RequireMCPToolUse: true}
	spent, err := agent.Guarded(a, 3, 0).Answer(context.Background(), agent.Task{Condition: cond, Prompt: "q"})
	if err == nil || err.Error() != "guard require_mcp_tool_use: the agent made no MCP tool call in 3 attempts" {
		t.Errorf("err = %v, want the guard error", err)
	}
	if n := model.Stats().Requests; n != 3 {
		t.Errorf("model calls = %d, want 3", n)
	}
	if spent == nil || spent.Attempts != 3 || spent.Content != "I know this one." {
		t.Errorf("partial answer = %+v", spent)
	}
}

func TestGuardKeepsWhatFailedAttemptsSpent(t *testing.T) {
	boom := errors.New("agent: turn 1: model unavailable")
	inner := &scripted{answers: []agent.Answer{{Content: "from memory", TokensIn: 10, TokensOut: 2, Attempts: 1}}, err: boom}
	cond := assay.Condition{Name: "with_graph", RequireMCPToolUse: true}
	spent, err := agent.Guarded(inner, 3, 0).Answer(context.Background(), agent.Task{Condition: cond, Prompt: "q"})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the second attempt's error", err)
	}
	if spent == nil || spent.TokensIn != 10 || spent.Attempts != 1 {
		t.Errorf("partial answer = %+v, want the first attempt's tokens", spent)
	}
}
