package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"assay/runner/llm"
	"assay/runner/llm/anthropictest"
)

// waits records the backoff waits a client chose, without waiting.
type waits struct {
	mu sync.Mutex
	d  []time.Duration
}

func (w *waits) sleep(ctx context.Context, d time.Duration) error {
	w.mu.Lock()
	w.d = append(w.d, d)
	w.mu.Unlock()
	return ctx.Err()
}

func anthropicClient(t *testing.T, h anthropictest.Handler, cfg llm.Config) (*llm.Client, *anthropictest.Server, *waits) {
	t.Helper()
	srv := anthropictest.New(h)
	t.Cleanup(srv.Close)
	w := &waits{}
	cfg.Provider, cfg.BaseURL, cfg.APIKey = llm.ProviderAnthropic, srv.URL, "sk-ant-test"
	if cfg.Model == "" {
		cfg.Model = "claude-sonnet-4-5"
	}
	cfg.Retry.Sleep = w.sleep
	return llm.New(cfg, nil), srv, w
}

func TestAnthropicChat(t *testing.T) {
	zero := 0.0
	c, srv, _ := anthropicClient(t, func(req *anthropictest.Request) anthropictest.Reply {
		return anthropictest.Reply{Text: "Rome.", Model: "claude-sonnet-4-5-20250929",
			Usage: anthropictest.Usage{InputTokens: 100, OutputTokens: 3, CacheReadInputTokens: 900, CacheCreationInputTokens: 50}}
	}, llm.Config{Temperature: &zero})
	resp, err := c.Chat(context.Background(), llm.Request{Messages: []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: "Answer in one word."},
		{Role: openai.ChatMessageRoleUser, Content: "Capital of Italy?"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != "Rome." || resp.FinishReason != "stop" || resp.Model != "claude-sonnet-4-5-20250929" || resp.Attempts != 1 {
		t.Errorf("response = %+v", resp)
	}
	if resp.TokensIn != 1050 || resp.TokensOut != 3 || resp.CacheReadTokens != 900 || resp.CacheWriteTokens != 50 {
		t.Errorf("tokens in %d (cache read %d, write %d), out %d; want 1050 (900, 50), 3", resp.TokensIn, resp.CacheReadTokens, resp.CacheWriteTokens, resp.TokensOut)
	}
	req := srv.Requests()[0]
	if req.SystemText() != "Answer in one word." || req.LastUser() != "Capital of Italy?" || req.Model != "claude-sonnet-4-5" ||
		req.Temperature == nil || *req.Temperature != 0 || req.MaxTokens != llm.DefaultAnthropicMaxTokens || req.Header.Get("X-Api-Key") != "sk-ant-test" {
		t.Errorf("request = %s (key %q)", req.Body, req.Header.Get("X-Api-Key"))
	}
	if !strings.Contains(string(req.Body), `"temperature":0`) {
		t.Errorf("temperature 0 is not sent: %s", req.Body)
	}
}

func TestAnthropicToolTurns(t *testing.T) {
	c, srv, _ := anthropicClient(t, func(req *anthropictest.Request) anthropictest.Reply {
		if res := req.ToolResults(); len(res) > 0 {
			var parts []string
			for _, r := range res {
				parts = append(parts, r.ToolUseID+"="+r.ResultText())
			}
			return anthropictest.Reply{Text: "Results: " + strings.Join(parts, ", ")}
		}
		return anthropictest.Reply{ToolUses: []anthropictest.ToolUse{{Name: "search", Input: map[string]any{"q": "rome"}}, {Name: "search", Input: map[string]any{"q": "italy"}}}}
	}, llm.Config{})
	tools := []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "search", Description: "Search the docs.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"],"additionalProperties":false}`)}}}
	msgs := []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "Find Rome."}}
	first, err := c.Chat(context.Background(), llm.Request{Messages: msgs, Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	calls := first.Message.ToolCalls
	if first.FinishReason != "tool_calls" || len(calls) != 2 || calls[0].Function.Name != "search" || calls[0].Function.Arguments != `{"q":"rome"}` {
		t.Fatalf("first answer = %+v", first)
	}
	msgs = append(msgs, first.Message,
		openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: calls[0].ID, Content: "Rome is the capital."},
		openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: calls[1].ID, Content: "Italy is a country."})
	second, err := c.Chat(context.Background(), llm.Request{Messages: msgs, Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	want := "Results: " + calls[0].ID + "=Rome is the capital., " + calls[1].ID + "=Italy is a country."
	if second.Content != want {
		t.Errorf("second answer = %q, want %q (both results in one user turn)", second.Content, want)
	}
	req := srv.Requests()[0]
	var schema map[string]any
	json.Unmarshal(req.Tools[0].InputSchema, &schema)
	if len(req.Tools) != 1 || req.Tools[0].Description != "Search the docs." || schema["additionalProperties"] != false || schema["type"] != "object" {
		t.Errorf("tools sent = %s", req.Body)
	}
	if n := len(srv.Requests()[1].Messages); n != 3 {
		t.Errorf("second request has %d messages, want user, assistant with tool uses, user with both results", n)
	}
}

func TestAnthropicStructuredAnswerIsAForcedToolCall(t *testing.T) {
	c, srv, _ := anthropicClient(t, func(req *anthropictest.Request) anthropictest.Reply {
		return anthropictest.Reply{ToolUses: []anthropictest.ToolUse{{Name: "answer", Input: map[string]any{"score": 4, "reasoning": "Mostly right."}}}}
	}, llm.Config{})
	format := &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
		JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{Name: "verdict", Strict: true,
			Schema: json.RawMessage(`{"type":"object","properties":{"score":{"type":"integer","enum":[1,2,3,4,5]},"reasoning":{"type":"string"}},"required":["score","reasoning"]}`)}}
	resp, err := c.Chat(context.Background(), llm.Request{Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "Grade it."}}, ResponseFormat: format})
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(resp.Content), &got); err != nil || got["score"] != 4.0 || len(resp.Message.ToolCalls) != 0 {
		t.Errorf("answer = %q (%v), tool calls %v", resp.Content, err, resp.Message.ToolCalls)
	}
	req := srv.Requests()[0]
	if !req.HasTool("answer") || string(req.ToolChoice) != `{"name":"answer","type":"tool"}` {
		t.Errorf("tool choice %s, tools %v", req.ToolChoice, req.ToolNames())
	}
}

func TestAnthropicFailures(t *testing.T) {
	for _, tc := range []struct {
		name     string
		replies  []anthropictest.Reply
		ok       bool
		attempts int
		waits    []time.Duration
		status   int
		message  string
	}{
		{"429 honours Retry-After", []anthropictest.Reply{{Status: 429, RetryAfter: "7", Text: "Number of requests has exceeded your rate limit"}, {Text: "ok"}},
			true, 2, []time.Duration{7 * time.Second}, 0, ""},
		{"overloaded is retried", []anthropictest.Reply{{Status: 529, Text: "Overloaded"}, {Status: 500}, {Text: "ok"}}, true, 3, nil, 0, ""},
		{"a bad request fails at once", []anthropictest.Reply{{Status: 400, Text: "max_tokens: too large"}}, false, 1, nil, 400,
			"status 400: invalid_request_error: max_tokens: too large"},
		{"a bad key fails at once", []anthropictest.Reply{{Status: 401, Text: "invalid x-api-key"}}, false, 1, nil, 401, "authentication_error"},
		{"a malformed body is retried", []anthropictest.Reply{{Body: `{"type": "message", "content": [`}, {Text: "ok"}}, true, 2, nil, 0, ""},
		{"a dropped connection is retried", []anthropictest.Reply{{Drop: true}, {Text: "ok"}}, true, 2, nil, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, srv, w := anthropicClient(t, func(req *anthropictest.Request) anthropictest.Reply {
				return tc.replies[min(req.Index, len(tc.replies)-1)]
			}, llm.Config{Retry: llm.RetryPolicy{MaxAttempts: 3}})
			resp, err := c.Chat(context.Background(), llm.Request{Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "Hi"}}})
			if srv.Stats().Requests != tc.attempts {
				t.Errorf("%d requests, want %d", srv.Stats().Requests, tc.attempts)
			}
			if tc.ok {
				if err != nil || resp.Content != "ok" || resp.Attempts != tc.attempts || len(resp.Retries) != tc.attempts-1 {
					t.Fatalf("resp %+v, err %v", resp, err)
				}
				if tc.waits != nil && (len(w.d) != 1 || w.d[0] != tc.waits[0]) {
					t.Errorf("waits = %v, want %v", w.d, tc.waits)
				}
				return
			}
			var e *llm.Error
			if !errors.As(err, &e) || e.StatusCode != tc.status || !strings.Contains(e.Message, tc.message) || e.Retryable {
				t.Errorf("error = %#v, want status %d saying %q", err, tc.status, tc.message)
			}
		})
	}
}

func TestAnthropicTimeout(t *testing.T) {
	c, _, _ := anthropicClient(t, func(req *anthropictest.Request) anthropictest.Reply {
		return anthropictest.Reply{Hang: true}
	}, llm.Config{CallTimeout: 200 * time.Millisecond, Retry: llm.RetryPolicy{MaxAttempts: 2}})
	_, err := c.Chat(context.Background(), llm.Request{Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "Hi"}}})
	var e *llm.Error
	if !errors.As(err, &e) || !e.Timeout || e.Attempts != 2 {
		t.Errorf("error = %#v, want a timeout after 2 attempts", err)
	}
}
