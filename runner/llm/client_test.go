package llm

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"assay/runner/llm/llmtest"
)

// sleeps records the waits a client asks for, without waiting.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.d = append(s.d, d)
	return ctx.Err()
}

func (s *sleeps) all() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

// newClient returns a client of srv whose backoff sleeps are recorded.
func newClient(srv *llmtest.Server, edit func(*Config)) (*Client, *sleeps) {
	rec := &sleeps{}
	cfg := Config{BaseURL: srv.URL, Model: "fake-model", APIKey: "sk-test"}
	cfg.Retry.Sleep = rec.sleep
	if edit != nil {
		edit(&cfg)
	}
	return New(cfg, nil), rec
}

// userTurn is a one-message conversation.
func userTurn(text string) Request {
	return Request{Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: text}}}
}

func TestChatRetries(t *testing.T) {
	ok := llmtest.Reply{Content: "ok"}
	tests := []struct {
		name        string
		replies     []llmtest.Reply
		maxAttempts int
		wantErr     bool
		wantStatus  int // of the error
		wantRetry   bool
		attempts    int
		sleeps      func(t *testing.T, d []time.Duration)
		timeout     time.Duration // per attempt; long unless the case needs one to expire
	}{
		{name: "429 honours Retry-After seconds", replies: []llmtest.Reply{{Status: 429, RetryAfter: "7"}, ok},
			attempts: 2, sleeps: exactly(7 * time.Second)},
		{name: "429 Retry-After capped at MaxBackoff", replies: []llmtest.Reply{{Status: 429, RetryAfter: "3600"}, ok},
			attempts: 2, sleeps: exactly(DefaultMaxBackoff)},
		{name: "429 Retry-After past any duration capped too", replies: []llmtest.Reply{{Status: 429, RetryAfter: "1e300"}, ok},
			attempts: 2, sleeps: exactly(DefaultMaxBackoff)},
		{name: "429 Retry-After HTTP-date", replies: []llmtest.Reply{
			{Status: 429, RetryAfter: time.Now().Add(20 * time.Second).UTC().Format(http.TimeFormat)}, ok},
			attempts: 2, sleeps: within(10*time.Second, 20*time.Second)},
		{name: "429 Retry-After -1 waits the backoff", replies: []llmtest.Reply{{Status: 429, RetryAfter: "-1"}, {Status: 429, RetryAfter: "NaN"}, ok},
			attempts: 3, sleeps: backoffs},
		{name: "500 and 503 retried with backoff", replies: []llmtest.Reply{{Status: 500}, {Status: 503, Body: "upstream down"}, ok},
			attempts: 3, sleeps: backoffs},
		{name: "400 fails at once", replies: []llmtest.Reply{{Status: 400, Content: "bad request"}, ok},
			wantErr: true, wantStatus: 400, attempts: 1, sleeps: exactly()},
		{name: "401 fails at once", replies: []llmtest.Reply{{Status: 401}, ok},
			wantErr: true, wantStatus: 401, attempts: 1, sleeps: exactly()},
		{name: "429 until attempts run out", replies: []llmtest.Reply{{Status: 429, RetryAfter: "0"}},
			wantErr: true, wantStatus: 429, wantRetry: true, attempts: 3, sleeps: exactly(0, 0)},
		{name: "malformed body retried", replies: []llmtest.Reply{{Body: llmtest.MalformedBody}, ok},
			attempts: 2},
		{name: "malformed body gives up after two retries", replies: []llmtest.Reply{{Body: llmtest.MalformedBody}},
			maxAttempts: 6, wantErr: true, wantStatus: 200, wantRetry: true, attempts: 3},
		{name: "completion without choices retried", replies: []llmtest.Reply{{Body: `{"choices":[]}`}, ok},
			attempts: 2},
		{name: "dropped connection retried", replies: []llmtest.Reply{{Drop: true}, ok},
			attempts: 2},
		{name: "hang hits the attempt deadline, then retried", replies: []llmtest.Reply{{Hang: true}, ok},
			attempts: 2, timeout: time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.New(llmtest.Script(tt.replies...))
			defer srv.Close()
			c, rec := newClient(srv, func(cfg *Config) {
				cfg.CallTimeout = cmp.Or(tt.timeout, time.Minute)
				cfg.Retry.MaxAttempts = tt.maxAttempts
			})
			resp, err := c.Chat(context.Background(), userTurn("hi"))
			attempts := checkOutcome(t, resp, err, tt.wantErr, tt.wantStatus, tt.wantRetry)
			if attempts != tt.attempts {
				t.Errorf("attempts = %d, want %d", attempts, tt.attempts)
			}
			if got := srv.Stats().Requests; got != tt.attempts {
				t.Errorf("server saw %d requests, want %d", got, tt.attempts)
			}
			if tt.sleeps != nil {
				tt.sleeps(t, rec.all())
			}
		})
	}
}

// checkOutcome checks success or the *Error of a call and returns its attempts.
func checkOutcome(t *testing.T, resp *Response, err error, wantErr bool, status int, retryable bool) int {
	t.Helper()
	if !wantErr {
		if err != nil {
			t.Fatalf("Chat: %v", err)
		}
		if resp.Content != "ok" || len(resp.Retries) != resp.Attempts-1 {
			t.Errorf("content %q, retries %q after %d attempts", resp.Content, resp.Retries, resp.Attempts)
		}
		t.Logf("retries: %q", resp.Retries)
		return resp.Attempts
	}
	t.Logf("error: %v", err)
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v, want *Error", err)
	}
	if e.StatusCode != status || e.Retryable != retryable {
		t.Errorf("error %+v, want status %d retryable %v", e, status, retryable)
	}
	return e.Attempts
}

// exactly checks the recorded waits are want.
func exactly(want ...time.Duration) func(*testing.T, []time.Duration) {
	return func(t *testing.T, got []time.Duration) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("waits %v, want %v", got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("waits %v, want %v", got, want)
			}
		}
	}
}

// within checks a single wait lies in [lo, hi].
func within(lo, hi time.Duration) func(*testing.T, []time.Duration) {
	return func(t *testing.T, got []time.Duration) {
		t.Helper()
		if len(got) != 1 || got[0] < lo || got[0] > hi {
			t.Errorf("waits %v, want one in [%s, %s]", got, lo, hi)
		}
	}
}

// backoffs checks two default backoff waits with equal jitter: 1s then 2s nominal.
func backoffs(t *testing.T, got []time.Duration) {
	t.Helper()
	if len(got) != 2 || got[0] < 500*time.Millisecond || got[0] > time.Second ||
		got[1] < time.Second || got[1] > 2*time.Second {
		t.Errorf("waits %v, want one in [0.5s,1s] then one in [1s,2s]", got)
	}
}

func TestChatRetryLinesSayWhy(t *testing.T) {
	srv := llmtest.New(llmtest.Script(llmtest.Reply{Hang: true}, llmtest.Reply{Status: 503}, llmtest.Reply{Content: "ok"}))
	defer srv.Close()
	c, _ := newClient(srv, func(cfg *Config) { cfg.CallTimeout = time.Second })
	resp, err := c.Chat(context.Background(), userTurn("hi"))
	if err != nil {
		t.Fatalf("Chat: %v", err)
	}
	want := []string{"attempt 1: no answer within 1s", "attempt 2: status 503"}
	for i, w := range want {
		if i >= len(resp.Retries) || !strings.HasPrefix(resp.Retries[i], w) {
			t.Errorf("retries %q, want line %d to start %q", resp.Retries, i, w)
		}
	}
}

func TestChatRefusesAReplyPastTheBound(t *testing.T) {
	huge := strings.Repeat("word ", MaxReplyBytes/5+1000)
	for name, reply := range map[string]llmtest.Reply{
		"a completion":  {Content: huge},
		"an error body": {Status: 500, Body: `{"error": {"message": "` + huge + `"}}`},
	} {
		t.Run(name, func(t *testing.T) {
			srv := llmtest.New(llmtest.Script(reply, llmtest.Reply{Content: "ok"}))
			defer srv.Close()
			c, _ := newClient(srv, func(cfg *Config) { cfg.Retry.MaxAttempts = 3 })
			_, err := c.Chat(context.Background(), userTurn("hi"))
			if err == nil || !strings.Contains(err.Error(), "larger than 8 MiB") {
				t.Fatalf("err = %v, want the reply refused as too large", err)
			}
			if n := srv.Stats().Requests; n != 1 {
				t.Errorf("%d requests: a reply too large is not asked for again", n)
			}
		})
	}
}

func TestChatNamesACutReply(t *testing.T) {
	srv := llmtest.New(llmtest.Script(llmtest.Reply{Body: `{"id": "x", "choices": [{"message": {"content": "par`}))
	defer srv.Close()
	c, _ := newClient(srv, func(cfg *Config) { cfg.Retry.MaxAttempts = 1 })
	_, err := c.Chat(context.Background(), userTurn("hi"))
	if err == nil || !strings.Contains(err.Error(), "ended before its JSON did") {
		t.Fatalf("err = %v", err)
	}
}
