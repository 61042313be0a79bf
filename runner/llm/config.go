// Package llm is a chat client for any OpenAI-compatible endpoint (OpenAI,
// Ollama, vLLM, OpenRouter) and for Anthropic's Messages API, that pins
// inference parameters, gives every attempt a deadline and retries only
// what can succeed later. Callers speak OpenAI's message shapes; the
// Anthropic side translates them.
package llm

import (
	"context"
	"time"
)

// Defaults applied by New to zero fields of Config and RetryPolicy.
const (
	DefaultMaxAttempts    = 3
	DefaultInitialBackoff = time.Second
	DefaultMultiplier     = 2.0
	DefaultMaxBackoff     = 30 * time.Second
	DefaultCallTimeout    = 120 * time.Second
)

// RetryPolicy says how often and how patiently a failed call is retried.
// Waits grow exponentially from InitialBackoff by Multiplier up to
// MaxBackoff, with equal jitter; a Retry-After header replaces the computed
// wait (still capped at MaxBackoff). Zero fields (and a Multiplier below 1)
// take the Default values.
type RetryPolicy struct {
	// MaxAttempts counts the first attempt too; 1 disables retries.
	MaxAttempts    int
	InitialBackoff time.Duration
	Multiplier     float64
	MaxBackoff     time.Duration
	// Sleep waits between attempts; nil uses a timer. It must return
	// ctx.Err() at once when ctx is done. Tests inject one to run fast and
	// to see the waits chosen.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Provider is the API a client speaks.
type Provider string

// The providers.
const (
	ProviderOpenAI    Provider = ""          // any OpenAI-compatible chat completions API
	ProviderAnthropic Provider = "anthropic" // the Anthropic Messages API
)

// Config is one model behind one endpoint, with pinned inference parameters.
type Config struct {
	// Provider is the API spoken; the zero value is OpenAI-compatible.
	// Anthropic takes no seed, and MaxTokens 0 there means
	// DefaultAnthropicMaxTokens.
	Provider Provider
	// BaseURL of the API, e.g. https://api.openai.com/v1 or
	// http://localhost:11434/v1; empty means OpenAI's (or Anthropic's).
	BaseURL string
	Model   string
	// APIKey is sent as a bearer token; empty sends no Authorization header.
	APIKey string
	// Temperature nil leaves the server's default; a pointer to 0 is sent
	// as "temperature": 0.
	Temperature *float64
	// Seed nil sends no seed.
	Seed *int
	// MaxTokens 0 sends no limit.
	MaxTokens int
	// CallTimeout is the deadline of each attempt.
	CallTimeout time.Duration
	Retry       RetryPolicy
	// Vertex, when set, reaches the model through Google's Vertex AI
	// (BaseURL then replaces Vertex's address); APIKey is not sent.
	Vertex *Vertex
	// CacheInstructions marks the system prompt cacheable where the API
	// asks for it (Anthropic's cache_control): a judge's instructions are
	// the same in every call, and read from the cache cost a tenth.
	CacheInstructions bool
	// Limit, when set, is the endpoint's adaptive limit of calls at once
	// (Limits.For); nil leaves the caller's own concurrency alone.
	Limit *Limiter
}

// withDefaults returns cfg with every zero knob set to its default.
func withDefaults(cfg Config) Config {
	r := &cfg.Retry
	if r.MaxAttempts <= 0 {
		r.MaxAttempts = DefaultMaxAttempts
	}
	if r.InitialBackoff <= 0 {
		r.InitialBackoff = DefaultInitialBackoff
	}
	if r.Multiplier < 1 {
		r.Multiplier = DefaultMultiplier
	}
	if r.MaxBackoff <= 0 {
		r.MaxBackoff = DefaultMaxBackoff
	}
	if r.Sleep == nil {
		r.Sleep = sleep
	}
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = DefaultCallTimeout
	}
	return cfg
}

// sleep waits d or until ctx is done, whichever comes first.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
