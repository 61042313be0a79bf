package llm

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"assay/runner/llm/llmtest"
)

func TestChatSendsPinnedParameters(t *testing.T) {
	zero, warm, seed := 0.0, 0.7, 42
	tests := []struct {
		name        string
		model       string
		temperature *float64
		seed        *int
		maxTokens   int
		wantTemp    string // the raw JSON value, "" for absent
		wantLimit   string // the JSON field carrying MaxTokens
	}{
		{name: "temperature 0 is sent", model: "m", temperature: &zero, seed: &seed, wantTemp: "0"},
		{name: "temperature 0.7 is sent exactly", model: "m", temperature: &warm, wantTemp: "0.7"},
		{name: "nil temperature is omitted", model: "m"},
		{name: "max_tokens", model: "llama3", maxTokens: 256, wantLimit: "max_tokens"},
		{name: "reasoning model takes max_completion_tokens", model: "o3-mini", maxTokens: 256, wantLimit: "max_completion_tokens"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.New(llmtest.Text("ok"))
			defer srv.Close()
			c, _ := newClient(srv, func(cfg *Config) {
				cfg.Model, cfg.Temperature, cfg.Seed, cfg.MaxTokens = tt.model, tt.temperature, tt.seed, tt.maxTokens
			})
			if _, err := c.Chat(context.Background(), userTurn("hi")); err != nil {
				t.Fatalf("Chat: %v", err)
			}
			req := srv.Requests()[0]
			var body map[string]json.RawMessage
			if err := json.Unmarshal(req.Body, &body); err != nil {
				t.Fatalf("request body: %v", err)
			}
			if got := string(body["temperature"]); got != tt.wantTemp {
				t.Errorf("temperature = %q, want %q in %s", got, tt.wantTemp, req.Body)
			}
			if tt.seed != nil && (req.Seed == nil || *req.Seed != *tt.seed) {
				t.Errorf("seed = %v, want %d", req.Seed, *tt.seed)
			}
			if tt.wantLimit != "" && string(body[tt.wantLimit]) != "256" {
				t.Errorf("%s missing from %s", tt.wantLimit, req.Body)
			}
			if req.Model != tt.model || req.Header.Get("Authorization") != "Bearer sk-test" {
				t.Errorf("model %q, authorization %q", req.Model, req.Header.Get("Authorization"))
			}
		})
	}
}

func TestChatReturnsUsageAndToolCalls(t *testing.T) {
	call := openai.ToolCall{ID: "call_7", Type: openai.ToolTypeFunction,
		Function: openai.FunctionCall{Name: "search", Arguments: `{"q":"go"}`}}
	tests := []struct {
		name    string
		reply   llmtest.Reply
		wantIn  int // 0: any positive estimate
		wantOut int
	}{
		{name: "reported usage", reply: llmtest.Reply{Content: "<think>hmm</think>\n answer ", PromptTokens: 11, CompletionTokens: 5}, wantIn: 11, wantOut: 5},
		{name: "estimated usage with a tool call", reply: llmtest.Reply{ToolCalls: []openai.ToolCall{call}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.New(llmtest.Script(tt.reply))
			defer srv.Close()
			c, _ := newClient(srv, nil)
			req := userTurn("find go")
			req.Tools = []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "search"}}}
			resp, err := c.Chat(context.Background(), req)
			if err != nil {
				t.Fatalf("Chat: %v", err)
			}
			if resp.TokensIn <= 0 || resp.TokensOut <= 0 ||
				(tt.wantIn > 0 && (resp.TokensIn != tt.wantIn || resp.TokensOut != tt.wantOut)) {
				t.Errorf("tokens %d/%d, want %d/%d", resp.TokensIn, resp.TokensOut, tt.wantIn, tt.wantOut)
			}
			if resp.Raw != tt.reply.Content {
				t.Errorf("raw %q, want %q", resp.Raw, tt.reply.Content)
			}
			if len(tt.reply.ToolCalls) > 0 {
				got := resp.Message.ToolCalls
				if len(got) != 1 || got[0].ID != "call_7" || got[0].Function != call.Function || resp.FinishReason != "tool_calls" {
					t.Errorf("tool calls %+v, finish %q", got, resp.FinishReason)
				}
			} else if resp.Content != "answer" {
				t.Errorf("content %q, want the answer without the think block", resp.Content)
			}
		})
	}
}

func TestChatBaseURLWithoutV1(t *testing.T) {
	srv := llmtest.New(llmtest.Text("ok"))
	defer srv.Close()
	c, _ := newClient(srv, func(cfg *Config) { cfg.BaseURL = strings.TrimSuffix(srv.URL, "/v1") + "/" })
	if _, err := c.Chat(context.Background(), userTurn("hi")); err != nil {
		t.Fatalf("Chat: %v", err)
	}
	if got := srv.Requests()[0].Path; got != "/chat/completions" {
		t.Errorf("path %q", got)
	}
}

func TestChatCancelStopsAtOnce(t *testing.T) {
	tests := []struct {
		name  string
		reply llmtest.Reply
		sleep bool // use the real sleep, so the cancel lands in a long backoff
	}{
		{name: "during a hanging call", reply: llmtest.Reply{Hang: true}},
		{name: "during backoff", reply: llmtest.Reply{Status: 503}, sleep: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			arrived := make(chan struct{}, 10)
			srv := llmtest.New(func(*llmtest.ChatRequest) llmtest.Reply {
				arrived <- struct{}{}
				return tt.reply
			})
			defer srv.Close()
			c, _ := newClient(srv, func(cfg *Config) {
				cfg.CallTimeout = time.Hour
				cfg.Retry.InitialBackoff, cfg.Retry.MaxBackoff = time.Hour, time.Hour
				if tt.sleep {
					cfg.Retry.Sleep = nil
				}
			})
			ctx, cancel := context.WithCancel(context.Background())
			go func() { <-arrived; cancel() }()
			_, err := c.Chat(ctx, userTurn("hi"))
			var e *Error
			if !errors.Is(err, context.Canceled) || !errors.As(err, &e) || e.Attempts != 1 {
				t.Fatalf("err = %v, want a canceled *Error after 1 attempt", err)
			}
			if n := srv.Stats().Requests; n != 1 {
				t.Errorf("server saw %d requests after cancel, want 1", n)
			}
		})
	}
}

func TestRetryAfterParsing(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name   string
		header map[string]string
		want   time.Duration
		ok     bool
	}{
		{name: "seconds", header: map[string]string{"Retry-After": "3"}, want: 3 * time.Second, ok: true},
		{name: "zero", header: map[string]string{"Retry-After": "0"}, want: 0, ok: true},
		{name: "http date", header: map[string]string{"Retry-After": now.Add(9 * time.Second).Format("Mon, 02 Jan 2006 15:04:05 GMT")}, want: 9 * time.Second, ok: true},
		{name: "date in the past", header: map[string]string{"Retry-After": now.Add(-time.Hour).Format("Mon, 02 Jan 2006 15:04:05 GMT")}, want: 0, ok: true},
		{name: "milliseconds", header: map[string]string{"Retry-After-Ms": "250", "Retry-After": "1"}, want: 250 * time.Millisecond, ok: true},
		{name: "garbage", header: map[string]string{"Retry-After": "soon"}},
		{name: "huge seconds", header: map[string]string{"Retry-After": "1e300"}, want: 24 * time.Hour, ok: true},
		{name: "huge milliseconds", header: map[string]string{"Retry-After-Ms": "1e300"}, want: 24 * time.Hour, ok: true},
		// Not a wait at all: the backoff decides.
		{name: "infinite", header: map[string]string{"Retry-After": "+Inf"}},
		{name: "not a number", header: map[string]string{"Retry-After": "NaN"}},
		{name: "negative", header: map[string]string{"Retry-After": "-5"}},
		{name: "minus one", header: map[string]string{"Retry-After": "-1"}},
		{name: "hugely negative", header: map[string]string{"Retry-After": "-1e300"}},
		{name: "negative milliseconds, seconds valid", header: map[string]string{"Retry-After-Ms": "-1", "Retry-After": "2"}, want: 2 * time.Second, ok: true},
		{name: "absent", header: map[string]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := make(map[string][]string)
			for k, v := range tt.header {
				h[k] = []string{v}
			}
			got, ok := retryAfter(h, now)
			if got != tt.want || ok != tt.ok {
				t.Errorf("retryAfter = %s, %v; want %s, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestChatSurvivesFaults(t *testing.T) {
	srv := llmtest.New(llmtest.Text("ok"), llmtest.WithFaults(0.1, 3))
	defer srv.Close()
	c, rec := newClient(srv, func(cfg *Config) { cfg.Retry.MaxAttempts = 8 })
	errs := make(chan error, 200)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 50 {
				_, err := c.Chat(context.Background(), userTurn("hi"))
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("Chat: %v", err)
		}
	}
	st := srv.Stats()
	faults := 0
	for _, n := range st.Faults {
		faults += n
	}
	if st.Requests != 200+faults || len(rec.all()) != faults {
		t.Errorf("%d requests and %d waits for 200 calls and %d faults", st.Requests, len(rec.all()), faults)
	}
}
