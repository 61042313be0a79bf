package runner_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	openai "github.com/sashabaranov/go-openai"

	"assay/report"
	"assay/runner/llm/llmtest"
	"assay/store"
)

// docsServer is an MCP server over streamable HTTP with a search tool and a broken one.
func docsServer(t *testing.T) string {
	s := mcp.NewServer(&mcp.Implementation{Name: "docs", Version: "1"}, nil)
	type query struct {
		Q string `json:"q"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "search", Description: "Searches the docs."}, func(_ context.Context, _ *mcp.CallToolRequest, in query) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "doc says: " + in.Q}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "broken", Description: "Fails."}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return nil, nil, errors.New("index unavailable")
	})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(func() { ts.CloseClientConnections(); ts.Close() })
	return ts.URL
}

// toolUser calls broken, then search, then answers, unless told to ignore tools.
func toolUser(req *llmtest.ChatRequest) llmtest.Reply {
	if strings.Contains(req.System(), "no tools") || len(req.Tools) == 0 {
		return llmtest.Reply{Content: "From memory: 4."}
	}
	calls := 0
	for _, m := range req.Messages {
		if m.Role == openai.ChatMessageRoleTool {
			calls++
		}
	}
	switch calls {
	case 0:
		return llmtest.Reply{ToolCalls: []openai.ToolCall{{ID: "c1", Type: "function", Function: openai.FunctionCall{Name: "broken", Arguments: `{}`}}}}
	case 1:
		return llmtest.Reply{ToolCalls: []openai.ToolCall{{ID: "c2", Type: "function", Function: openai.FunctionCall{Name: "search", Arguments: `{"q":"sum"}`}}}}
	}
	return llmtest.Reply{Content: "The docs say 4."}
}

func TestToolConditionsRecordTracesAndGuards(t *testing.T) {
	url := docsServer(t)
	f := newFixture(t, llmtest.JudgeAndAgent(llmtest.Judge(nil), toolUser))
	cfg := f.config(f.qaDataset(3), `mcp_servers:
  docs: {type: http, url: "`+url+`"}`)
	cfg.ConditionSpecs[0].Name, cfg.ConditionSpecs[0].MCPServers, cfg.ConditionSpecs[0].RequireMCPToolSuccess = "with-docs", []string{"docs"}, true
	cfg.ConditionSpecs[1].Name, cfg.ConditionSpecs[1].MCPServers, cfg.ConditionSpecs[1].RequireMCPToolUse = "ignores-docs", []string{"docs"}, true
	cfg.ConditionSpecs[1].SystemPrompt = "Use no tools."
	cfg.Execution.NumRepetitions = 1
	run := f.launch(cfg)
	if _, err := f.m.Execute(context.Background(), run.ID); err != nil {
		t.Fatal(err)
	}
	results, _ := f.db.Results(context.Background(), run.ID)
	for _, r := range results {
		switch r.Condition {
		case "with-docs":
			if r.Error != "" || r.Response != "The docs say 4." || len(r.ToolCalls) != 2 {
				t.Fatalf("with-docs result: %+v", r)
			}
			// Three turns, no fault: three calls, no retry.
			if r.Attempts != 3 || len(r.Retries) != 0 {
				t.Errorf("a tool loop without a fault: %d calls, retries %q", r.Attempts, r.Retries)
			}
			first, second := r.ToolCalls[0], r.ToolCalls[1]
			if first.Tool != "broken" || !first.IsError || second.Tool != "search" || second.Server != "docs" ||
				second.Turn != 2 || !strings.Contains(second.Result, "doc says: sum") || second.IsError {
				t.Fatalf("trace %+v", r.ToolCalls)
			}
		case "ignores-docs":
			if !strings.Contains(r.Error, "require_mcp_tool_use") || r.TokensIn == 0 {
				t.Fatalf("a broken guard is an error naming it, with its tokens kept: %+v", r)
			}
		}
	}
	s, _ := report.Summarize(context.Background(), f.db, run.ID)
	for _, c := range s.Conditions {
		if c.Name == "with-docs" && (c.ToolCalls != 6 || c.ToolErrors != 3 || c.Retried != 0) {
			t.Errorf("with-docs: %d tool calls, %d errors, %d retried; want 6, 3 and 0", c.ToolCalls, c.ToolErrors, c.Retried)
		}
		if c.Name == "ignores-docs" && c.Errors != 3 {
			t.Errorf("ignores-docs: %d errors, want 3", c.Errors)
		}
	}
	// Every task under ignores-docs broke its guard: the run says so.
	run2, _ := f.db.Run(context.Background(), run.ID)
	if run2.Status != store.RunFailed || !strings.Contains(run2.Message, `under "ignores-docs" failed — most often (3×)`) {
		t.Errorf("status %s: %q", run2.Status, run2.Message)
	}
}
