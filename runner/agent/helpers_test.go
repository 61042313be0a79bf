package agent_test

import (
	"encoding/json"
	"os"
	"slices"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"assay/runner/agent"
	"assay/runner/agent/internal/mcptest"
	"assay/runner/llm"
	"assay/runner/llm/llmtest"
	"assay/store"
)

func TestMain(m *testing.M) { mcptest.Main(m) }

// env is a getenv over a fixed map, with a PATH to find programs.
func env(m map[string]string) func(string) string {
	return func(k string) string {
		if v, ok := m[k]; ok {
			return v
		}
		if k == "PATH" {
			return "/usr/local/bin:/usr/bin:/bin"
		}
		return ""
	}
}

// toolModel is a model that, while it has not seen a tool result, calls
// tool with args (if offered), and then answers with what the tool said.
// Every reply costs 10 prompt and 5 completion tokens.
func toolModel(tool, args string) llmtest.Handler {
	return func(req *llmtest.ChatRequest) llmtest.Reply {
		last := req.Messages[len(req.Messages)-1]
		switch {
		case last.Role == openai.ChatMessageRoleTool:
			return llmtest.Reply{Content: "The tool said: " + last.Content, PromptTokens: 10, CompletionTokens: 5}
		case !offered(req, tool):
			return llmtest.Reply{Content: "I have no tool " + tool + ".", PromptTokens: 10, CompletionTokens: 5}
		}
		return llmtest.Reply{ToolCalls: []openai.ToolCall{{Function: openai.FunctionCall{Name: tool, Arguments: args}}},
			PromptTokens: 10, CompletionTokens: 5}
	}
}

// offered reports whether req offers a function named name.
func offered(req *llmtest.ChatRequest, name string) bool {
	return slices.ContainsFunc(req.Tools, func(t openai.Tool) bool { return t.Function != nil && t.Function.Name == name })
}

// newOpenAI returns an agent asking a fake model answering with h, closed
// when the test ends.
func newOpenAI(t *testing.T, h llmtest.Handler, opts agent.OpenAIOptions) (*agent.OpenAI, *llmtest.Server) {
	t.Helper()
	model := llmtest.New(h)
	t.Cleanup(model.Close)
	if opts.Getenv == nil {
		opts.Getenv = env(nil)
	}
	client := llm.New(llm.Config{BaseURL: model.URL, Model: "fake-model", Retry: llm.RetryPolicy{MaxAttempts: 1}}, nil)
	a := agent.NewOpenAI(client, opts)
	t.Cleanup(func() {
		if err := a.Close(); err != nil {
			t.Errorf("close agent: %v", err)
		}
	})
	return a, model
}

// trace is a tool call without its duration, for comparing.
func trace(calls []store.ToolCall) string {
	out := make([]store.ToolCall, len(calls))
	for i, c := range calls {
		c.DurationMS = 0
		out[i] = c
	}
	b, _ := json.Marshal(out)
	return string(b)
}

var osGetenv = os.Getenv
