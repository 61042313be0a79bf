package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"assay"
	"assay/runner/agent"
	"assay/runner/agent/internal/mcptest"
)

// streamJSON is what `claude -p --output-format stream-json --verbose`
// prints for an answer that used one MCP tool twice (once failing) and a
// built-in tool.
const streamJSON = `{"type":"system","subtype":"init","session_id":"s1","model":"claude-sonnet-4-5-20250929","mcp_servers":[{"name":"graph","status":"connected"},{"name":"personal","status":"failed"}],"tools":["Read","mcp__graph__query"]}
{"type":"assistant","message":{"id":"msg_1","role":"assistant","content":[{"type":"text","text":"Let me look."},{"type":"tool_use","id":"toolu_1","name":"mcp__graph__query","input":{"q":"MATCH (n) RETURN n"}}]},"session_id":"s1"}
{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"syntax error near MATCH","is_error":true}]},"session_id":"s1"}
{"type":"assistant","message":{"id":"msg_2","role":"assistant","content":[{"type":"tool_use","id":"toolu_2","name":"mcp__graph__query","input":{"q":"MATCH (n) RETURN count(n)"}}]},"session_id":"s1"}
{"type":"assistant","message":{"id":"msg_2","role":"assistant","content":[{"type":"tool_use","id":"toolu_3","name":"Read","input":{"file_path":"/etc/hosts"}}]},"session_id":"s1"}
{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_2","content":[{"type":"text","text":"42"}]},{"type":"tool_result","tool_use_id":"toolu_3","content":"127.0.0.1 localhost"}]},"session_id":"s1"}
{"type":"assistant","message":{"id":"msg_3","role":"assistant","content":[{"type":"text","text":"There are 42 nodes."}]},"session_id":"s1"}
{"type":"result","subtype":"success","is_error":false,"num_turns":3,"result":"There are 42 nodes.","session_id":"s1","total_cost_usd":0.0123,"usage":{"input_tokens":100,"cache_creation_input_tokens":20,"cache_read_input_tokens":300,"output_tokens":50}}
`

func TestCommandAgentReadsClaudeCodeOutput(t *testing.T) {
	graph := assay.Condition{Name: "with_graph", MCPServers: []assay.MCPServer{{Name: "graph", Command: "graph-mcp"}}}
	tests := []struct {
		name      string
		output    string
		cond      assay.Condition
		want      agent.Answer
		wantTrace string
		wantErr   string
	}{
		{"stream-json", streamJSON, graph,
			agent.Answer{Content: "There are 42 nodes.", Model: "claude-sonnet-4-5-20250929", TokensIn: 420, TokensOut: 50},
			`[{"turn":1,"server":"graph","tool":"query","arguments":{"q":"MATCH (n) RETURN n"},"result":"syntax error near MATCH","is_error":true,"duration_ms":0,"thought":"Let me look."},` +
				`{"turn":2,"server":"graph","tool":"query","arguments":{"q":"MATCH (n) RETURN count(n)"},"result":"42","is_error":false,"duration_ms":0}]`, ""},
		{"json", `{"type":"result","subtype":"success","is_error":false,"result":"Paris.","usage":{"input_tokens":12,"output_tokens":3},"modelUsage":{"claude-haiku-4-5":{"inputTokens":12}}}`,
			assay.Condition{Name: "baseline"}, agent.Answer{Content: "Paris.", Model: "claude-haiku-4-5", TokensIn: 12, TokensOut: 3}, `[]`, ""},
		{"json array", `[{"type":"system","subtype":"init","model":"m"},{"type":"result","result":"ok","usage":{"input_tokens":1,"output_tokens":1}}]`,
			assay.Condition{Name: "baseline"}, agent.Answer{Content: "ok", Model: "m", TokensIn: 1, TokensOut: 1}, `[]`, ""},
		{"failed result", `{"type":"result","subtype":"error_max_turns","is_error":true,"result":""}`,
			assay.Condition{Name: "baseline"}, agent.Answer{}, "", "agent: claude code: error_max_turns"},
		{"condition's server failed", strings.Replace(streamJSON, `"graph","status":"connected"`, `"graph","status":"failed"`, 1), graph,
			agent.Answer{}, "", "agent: claude code: mcp server graph failed to start"},
		{"plain JSON answer", `{"type":"fruit","name":"apple"}`, assay.Condition{Name: "baseline"},
			agent.Answer{Content: `{"type":"fruit","name":"apple"}`}, `[]`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mcptest.NoOrphans(t)
			out := filepath.Join(t.TempDir(), "out.json")
			if err := os.WriteFile(out, []byte(tt.output), 0o644); err != nil {
				t.Fatal(err)
			}
			a := agent.NewCommand(agent.CommandOptions{Argv: []string{"cat", out}, Getenv: env(nil)})
			ans, err := a.Answer(context.Background(), agent.Task{Condition: tt.cond, Prompt: "How many nodes?"})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ans.Content != tt.want.Content || ans.Model != tt.want.Model || ans.TokensIn != tt.want.TokensIn || ans.TokensOut != tt.want.TokensOut {
				t.Errorf("answer = %q, %q, %d/%d; want %q, %q, %d/%d", ans.Content, ans.Model, ans.TokensIn, ans.TokensOut,
					tt.want.Content, tt.want.Model, tt.want.TokensIn, tt.want.TokensOut)
			}
			if got := trace(ans.ToolCalls); got != tt.wantTrace {
				t.Errorf("tool calls = %s\nwant %s", got, tt.wantTrace)
			}
		})
	}
}

func TestGuardsHoldForClaudeCode(t *testing.T) {
	mcptest.NoOrphans(t)
	out := filepath.Join(t.TempDir(), "out.json")
	noTools := `{"type":"result","subtype":"success","is_error":false,"result":"From memory.","usage":{"input_tokens":10,"output_tokens":2}}`
	if err := os.WriteFile(out, []byte(noTools), 0o644); err != nil {
		t.Fatal(err)
	}
	a := agent.Guarded(agent.NewCommand(agent.CommandOptions{Argv: []string{"cat", out}}), 2, 0)
	cond := assay.Condition{Name: "with_graph", RequireMCPToolUse: true}
	spent, err := a.Answer(context.Background(), agent.Task{Condition: cond, Prompt: "q"})
	if err == nil || err.Error() != "guard require_mcp_tool_use: the agent made no MCP tool call in 2 attempts" {
		t.Errorf("err = %v", err)
	}
	if spent == nil || spent.TokensIn != 20 || spent.Attempts != 2 {
		t.Errorf("partial answer = %+v, want the tokens of both attempts", spent)
	}
}
