package llm

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"assay/runner/llm/llmtest"
)

// callAll makes n calls with n goroutines at once, as a run at
// max_concurrent n does, and returns how many failed.
func callAll(c *Client, n int) int {
	var wg sync.WaitGroup
	var mu sync.Mutex
	failed := 0
	for range n {
		wg.Go(func() {
			_, err := c.Chat(context.Background(), Request{Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "2+2?"}}})
			if err != nil {
				mu.Lock()
				failed++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return failed
}

// A provider that takes 50 requests a second (10 at once) and 100 calls
// made together: with the adaptive limit nearly every request is taken;
// with a fixed concurrency of 100 most of them meet a 429.
func TestAdaptiveLimitMeetsTheProvidersRateLimit(t *testing.T) {
	const calls = 100
	share := func(adaptive bool) (float64, int) {
		srv := llmtest.New(llmtest.Text("4"), llmtest.WithRateLimit(50, 10), llmtest.WithLatency(5*time.Millisecond))
		defer srv.Close()
		cfg := Config{BaseURL: srv.URL, Model: "m", Retry: RetryPolicy{MaxAttempts: 50, InitialBackoff: 10 * time.Millisecond, MaxBackoff: time.Second}}
		var lim *Limiter
		if !adaptive {
			cfg.Retry.MaxAttempts = 4 // enough to show the storm; its calls may fail
		}
		if adaptive {
			lim = (&Limits{}).For(cfg, calls)
			cfg.Limit = lim
		}
		began := time.Now()
		failed := callAll(New(cfg, nil), calls)
		t.Logf("adaptive %v: %d calls in %s (at 50 a second after the first 10: %s)", adaptive, calls, time.Since(began).Round(time.Millisecond), time.Duration(float64(calls-10)/50*float64(time.Second)))
		st := srv.Stats()
		if lim != nil {
			if got := lim.State(); got.InFlight != 0 || got.RateLimited != int64(st.Status[http.StatusTooManyRequests]) {
				t.Errorf("the limiter's state after the calls: %+v; the server sent %d 429s", got, st.Status[http.StatusTooManyRequests])
			}
		}
		return float64(st.Status[http.StatusTooManyRequests]) / float64(st.Requests), failed
	}
	adaptive, failed := share(true)
	if adaptive >= 0.05 || failed > 0 {
		t.Errorf("adaptive: %.1f%% of requests met a 429, %d calls failed; want under 5%% and none", 100*adaptive, failed)
	}
	fixed, _ := share(false)
	if fixed < 0.5 {
		t.Errorf("fixed concurrency: %.1f%% of requests met a 429; the storm the limit avoids should show", 100*fixed)
	}
	t.Logf("429s: %.1f%% of requests adaptive, %.1f%% fixed", 100*adaptive, 100*fixed)
}

// Without rate-limit headers, a 429 halves the limit and each answer after
// it adds back a call per limit's worth of answers; the first answer opens
// the ceiling.
func TestLimitHalvesOnA429AndGrowsBack(t *testing.T) {
	l := (&Limits{}).For(Config{Model: "m"}, 40)
	ctx := context.Background()
	start := func() time.Time {
		at, err := l.acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return at
	}
	if s := l.State(); s.Limit != 40 {
		t.Fatalf("limit %d at start, want the ceiling 40 (with %d calls before the first answer)", s.Limit, startingCalls)
	}
	for range startingCalls {
		start()
	}
	ctxShort, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	if _, err := l.acquire(ctxShort); err == nil {
		t.Fatalf("a call beyond the first %d started before any answer", startingCalls)
	}
	cancel()
	first := time.Now()
	l.release(first, 200, nil)
	for range 10 {
		start()
	}
	// Four calls in flight together meet 429s: the limit halves once.
	began := time.Now()
	for range 4 {
		l.release(began.Add(-time.Millisecond), http.StatusTooManyRequests, nil)
	}
	if s := l.State(); s.Limit != 20 || s.RateLimited != 4 {
		t.Fatalf("after four 429s of calls in flight together: %+v, want limit 20 and 4 met", s)
	}
	// A 429 of a call started after the cut halves it again.
	at := start()
	l.release(at, http.StatusTooManyRequests, nil)
	if s := l.State(); s.Limit != 10 {
		t.Fatalf("after a later 429: limit %d, want 10", s.Limit)
	}
	// Ten answers add one call.
	for range 10 {
		l.release(start(), 200, nil)
	}
	if s := l.State(); s.Limit != 10 && s.Limit != 11 {
		t.Fatalf("after ten answers: limit %d, want 10 going on 11", s.Limit)
	}
}

// A Retry-After on a 429 holds every call to the endpoint, not only the
// one that met it.
func TestRetryAfterHoldsTheWholeEndpoint(t *testing.T) {
	l := (&Limits{}).For(Config{Model: "m"}, 10)
	ctx := context.Background()
	at, _ := l.acquire(ctx)
	h := http.Header{}
	h.Set("Retry-After-Ms", "150")
	l.release(at, http.StatusTooManyRequests, h)
	began := time.Now()
	if _, err := l.acquire(ctx); err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(began); waited < 140*time.Millisecond {
		t.Errorf("the next call started after %s, inside the 150 ms the server asked for", waited)
	}
}

// A provider's headers of hours — a request limit of 1 a day, no tokens
// left until tomorrow — hold the endpoint's calls a minute at most, as
// Retry-After does, and the limiter says until when.
func TestRateLimitHeadersOfHoursHoldAMinuteAtMost(t *testing.T) {
	for _, c := range []struct {
		name   string
		header map[string]string
		held   bool
	}{
		{"requests", map[string]string{"x-ratelimit-limit-requests": "1", "x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "24h"}, false},
		{"tokens", map[string]string{"x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": "24h"}, true},
	} {
		l := (&Limits{}).For(Config{Model: "m"}, 10)
		ctx := context.Background()
		h := http.Header{}
		for k, v := range c.header {
			h.Set(k, v)
		}
		at, _ := l.acquire(ctx)
		l.release(at, http.StatusOK, h)
		if !c.held { // the first paced call goes at once and sets the pace
			at, _ = l.acquire(ctx)
			l.release(at, http.StatusOK, h)
		}
		st := l.State()
		if wait := time.Until(st.Until); wait <= 0 || wait > maxWait || st.Held != c.held || st.Paced == c.held {
			t.Errorf("%s reset in 24h: held %v, paced %v, the next call in %s; want at most %s", c.name, st.Held, st.Paced, wait, maxWait)
		}
	}
}

func TestRateLimitHeaders(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	h := http.Header{}
	h.Set("x-ratelimit-limit-requests", "60")
	h.Set("x-ratelimit-remaining-requests", "59")
	h.Set("x-ratelimit-reset-requests", "1s")
	if lim, left, reset, ok := requestHeaders(h, now); !ok || lim != 60 || left != 59 || reset != time.Second {
		t.Errorf("OpenAI's headers: %d %d %s %v", lim, left, reset, ok)
	}
	a := http.Header{}
	a.Set("anthropic-ratelimit-requests-limit", "50")
	a.Set("anthropic-ratelimit-requests-remaining", "0")
	a.Set("anthropic-ratelimit-requests-reset", now.Add(1200*time.Millisecond).Format(time.RFC3339Nano))
	a.Set("anthropic-ratelimit-tokens-remaining", "9000")
	a.Set("anthropic-ratelimit-output-tokens-remaining", "0")
	a.Set("anthropic-ratelimit-output-tokens-reset", now.Add(3*time.Second).Format(time.RFC3339))
	if lim, left, reset, ok := requestHeaders(a, now); !ok || lim != 50 || left != 0 || reset != 1200*time.Millisecond {
		t.Errorf("Anthropic's headers: %d %d %s %v", lim, left, reset, ok)
	}
	if left, reset, ok := tokenHeaders(a, now); !ok || left != 0 || reset != 3*time.Second {
		t.Errorf("Anthropic's token headers, the least of them: %d %s %v", left, reset, ok)
	}
	if got := resetIn("6m0s", now); got != 6*time.Minute {
		t.Errorf("reset 6m0s read as %s", got)
	}
	if got := resetIn("soon", now); got != 0 {
		t.Errorf("reset \"soon\" read as %s, want none", got)
	}
}

// Runs share a limiter per endpoint and key, whatever the model; another
// key or endpoint has its own.
func TestLimitsAreSharedPerEndpointAndKey(t *testing.T) {
	var ls Limits
	a := ls.For(Config{BaseURL: "https://api.example.com/v1", APIKey: "k1", Model: "m"}, 10)
	b := ls.For(Config{BaseURL: "https://api.example.com/v1", APIKey: "k1", Model: "m"}, 30)
	if a != b || a.State().Ceiling != 30 {
		t.Errorf("two runs on one endpoint, key and model: shared %v, ceiling %d (want the larger, 30)", a == b, a.State().Ceiling)
	}
	if c := ls.For(Config{BaseURL: "https://api.example.com/v1", APIKey: "k2", Model: "m"}, 10); c == a {
		t.Error("another key shares the limiter")
	}
	if c := ls.For(Config{BaseURL: "https://api.example.com/v1", APIKey: "k1", Model: "n"}, 10); c != a {
		t.Error("another model on the same endpoint and key has a limiter of its own")
	}
	if c := ls.For(Config{BaseURL: "https://other.example.com/v1", APIKey: "k1", Model: "m"}, 10); c == a {
		t.Error("another endpoint shares the limiter")
	}
	if got := a.State().Endpoint; got != "api.example.com" {
		t.Errorf("endpoint named %q", got)
	}
}
