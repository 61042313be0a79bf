package llm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// A Limiter finds how many calls one endpoint takes at once with one key,
// between 1 and a ceiling (execution.max_concurrent), so that a run meets a
// provider's rate limit without a storm of 429s:
//
//   - it starts with a few calls and, once the first answer is back, allows
//     the ceiling;
//   - the provider's rate-limit headers (OpenAI's x-ratelimit-*,
//     Anthropic's anthropic-ratelimit-*) say how many requests are left and
//     how fast they come back: what is left (less the calls in flight) goes
//     at once, the rest at the rate the provider refills;
//   - a 429 halves the limit (once for the calls that were in flight
//     together) and its Retry-After holds every call to the endpoint, not
//     only the one that met it; each answer after that adds one call per
//     limit's worth of answers (additive increase, multiplicative decrease).
//
// Runs executed by one process share a Limiter per endpoint and key
// (Limits), since the provider counts their calls together.
type Limiter struct {
	name string

	mu       sync.Mutex
	ceiling  int
	limit    float64
	probing  bool // no answer back yet: a few calls only
	inFlight int
	// credit is how many calls may start at once by the provider's headers
	// (known is false until a header said so); past it, calls start every
	// per, from next on.
	known  bool
	credit float64
	per    time.Duration
	next   time.Time
	// readFrom is when the call whose headers last set credit started: an
	// older call's headers are staler.
	readFrom time.Time
	hold     time.Time // no call starts before: Retry-After, no tokens left
	lastCut  time.Time // when the limit was last halved
	waiting  int
	wake     chan struct{}
	limited  int64 // 429s met
	paced    bool  // the last headers left no room: calls go at the provider's rate
}

// startingCalls is how many calls go before the first answer says what the
// endpoint takes.
const startingCalls = 4

// maxWait is the longest a provider's headers hold or space the calls to an
// endpoint: a Retry-After, a token reset, the pace of a request limit. A
// header of hours (x-ratelimit-reset-requests: 24h) would otherwise hold
// every run on the endpoint for days; the calls then learn again.
const maxWait = time.Minute

// LimitState is what a Limiter stands at, for the run page.
type LimitState struct {
	Endpoint    string // the host, e.g. "api.openai.com"
	Limit       int    // calls allowed at once now
	Ceiling     int    // execution.max_concurrent
	InFlight    int
	RateLimited int64     // 429s met since the process started
	Paced       bool      // calls go at the rate the provider's headers give
	Held        bool      // the provider said to wait (Retry-After, no tokens left)
	Until       time.Time // when paced or held: when the next call may start
}

// State says where l stands.
func (l *Limiter) State() LimitState {
	l.mu.Lock()
	defer l.mu.Unlock()
	st := LimitState{Endpoint: l.name, Limit: int(l.limit), Ceiling: l.ceiling, InFlight: l.inFlight,
		RateLimited: l.limited, Paced: l.paced}
	now := time.Now()
	if now.Before(l.hold) {
		st.Held, st.Until = true, l.hold
	}
	if l.paced && now.Before(l.next) && l.next.After(st.Until) {
		st.Until = l.next
	}
	return st
}

// acquire waits for room for one call, or for ctx's end.
func (l *Limiter) acquire(ctx context.Context) (time.Time, error) {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		l.mu.Lock()
		now := time.Now()
		wait, ok := l.take(now)
		if ok {
			l.mu.Unlock()
			return now, nil
		}
		if l.wake == nil {
			l.wake = make(chan struct{})
		}
		wake := l.wake
		l.waiting++
		l.mu.Unlock()
		var fire <-chan time.Time
		if wait > 0 {
			if timer == nil {
				timer = time.NewTimer(wait)
			} else {
				timer.Reset(wait)
			}
			fire = timer.C
		}
		var err error
		select {
		case <-ctx.Done():
			err = ctx.Err()
		case <-wake:
		case <-fire:
		}
		l.mu.Lock()
		l.waiting--
		l.mu.Unlock()
		if err != nil {
			return time.Time{}, err
		}
	}
}

// take starts a call now if there is room, or says how long until a time
// that may make room (0: until a call ends).
func (l *Limiter) take(now time.Time) (time.Duration, bool) {
	if now.Before(l.hold) {
		return l.hold.Sub(now), false
	}
	allowed := max(int(l.limit), 1)
	if l.probing {
		allowed = min(allowed, startingCalls)
	}
	if l.inFlight >= allowed {
		return 0, false
	}
	if l.known && l.credit < 1 && l.per > 0 {
		if now.Before(l.next) {
			return l.next.Sub(now), false
		}
		l.next = now.Add(l.per)
		l.paced = true
	} else if l.known {
		l.credit--
	}
	l.inFlight++
	return 0, true
}

// release ends a call started at started, which the server answered with
// status and header (status 0: no answer).
func (l *Limiter) release(started time.Time, status int, header http.Header) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	l.inFlight--
	l.read(header, started, now)
	switch {
	case status == http.StatusTooManyRequests:
		l.limited++
		l.probing = false
		if !started.Before(l.lastCut) { // not a call in flight with the one that cut it
			l.limit = max(1, l.limit/2)
			l.lastCut = now
		}
		if d, ok := retryAfter(header, now); ok {
			l.hold = maxTime(l.hold, now.Add(min(d, maxWait)))
		}
	case status >= 200 && status < 300:
		if l.probing {
			l.probing = false
			if l.lastCut.IsZero() {
				l.limit = float64(l.ceiling)
			}
		} else if l.limit < float64(l.ceiling) {
			l.limit = min(float64(l.ceiling), l.limit+1/l.limit)
		}
	}
	if l.waiting > 0 && l.wake != nil {
		close(l.wake)
		l.wake = nil
	}
}

// read takes in what the provider's rate-limit headers say: requests left
// and how fast they come back, and whether tokens are left. The requests
// left are as the provider counted them when the call arrived: the answer
// of a call started before the one that last set them is staler, and
// ignored (answers come back out of order).
func (l *Limiter) read(h http.Header, started, now time.Time) {
	if h == nil {
		return
	}
	if limit, left, reset, ok := requestHeaders(h, now); ok && !started.Before(l.readFrom) {
		l.readFrom = started
		margin := max(1, float64(limit)/20)
		l.known = true
		l.credit = float64(left) - float64(l.inFlight) - margin
		l.per = 0
		if used := limit - left; used > 0 && reset > 0 {
			// What is left is whole requests, rounded down: the requests
			// used are half a request fewer on average, and a call every
			// per comes back a little later than the provider refills.
			l.per = min(time.Duration(float64(reset)/(float64(used)-0.5)*1.02), maxWait)
		}
		if l.credit >= 1 {
			l.paced = false
		}
	}
	if left, reset, ok := tokenHeaders(h, now); ok && left <= 0 && reset > 0 {
		l.hold = maxTime(l.hold, now.Add(min(reset, maxWait)))
	}
}

// requestHeaders reads a provider's request limit: its size, the requests
// left, and the time until it is whole again.
func requestHeaders(h http.Header, now time.Time) (limit, left int, reset time.Duration, ok bool) {
	for _, p := range [...]struct{ limit, left, reset string }{
		{"X-Ratelimit-Limit-Requests", "X-Ratelimit-Remaining-Requests", "X-Ratelimit-Reset-Requests"},
		{"Anthropic-Ratelimit-Requests-Limit", "Anthropic-Ratelimit-Requests-Remaining", "Anthropic-Ratelimit-Requests-Reset"},
	} {
		lim, err1 := strconv.Atoi(strings.TrimSpace(h.Get(p.limit)))
		rem, err2 := strconv.Atoi(strings.TrimSpace(h.Get(p.left)))
		if err1 != nil || err2 != nil || lim <= 0 || rem < 0 {
			continue
		}
		return lim, min(rem, lim), resetIn(h.Get(p.reset), now), true
	}
	return 0, 0, 0, false
}

// tokenHeaders reads the tokens left of a provider's token limit and the
// time until it is whole again (the least of Anthropic's three).
func tokenHeaders(h http.Header, now time.Time) (left int, reset time.Duration, ok bool) {
	left = -1
	for _, p := range [...]struct{ left, reset string }{
		{"X-Ratelimit-Remaining-Tokens", "X-Ratelimit-Reset-Tokens"},
		{"Anthropic-Ratelimit-Tokens-Remaining", "Anthropic-Ratelimit-Tokens-Reset"},
		{"Anthropic-Ratelimit-Input-Tokens-Remaining", "Anthropic-Ratelimit-Input-Tokens-Reset"},
		{"Anthropic-Ratelimit-Output-Tokens-Remaining", "Anthropic-Ratelimit-Output-Tokens-Reset"},
	} {
		rem, err := strconv.Atoi(strings.TrimSpace(h.Get(p.left)))
		if err != nil || rem < 0 {
			continue
		}
		if !ok || rem < left {
			left, reset, ok = rem, resetIn(h.Get(p.reset), now), true
		}
	}
	return left, reset, ok
}

// resetIn reads a reset header: a duration as OpenAI writes it ("1s",
// "6m0s", "20ms"), seconds, or a time as Anthropic writes it (RFC 3339).
func resetIn(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if d, err := time.ParseDuration(v); err == nil && d > 0 {
		return min(d, longestWait)
	}
	if secs, ok := waitValue(v); ok {
		return duration(secs, time.Second)
	}
	if at, err := time.Parse(time.RFC3339, v); err == nil {
		return min(max(at.Sub(now), 0), longestWait)
	}
	return 0
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// Limits holds a process's limiters, one per endpoint and key.
type Limits struct {
	mu sync.Mutex
	by map[string]*Limiter
}

// For returns the limiter of cfg's endpoint and key, its ceiling
// raised to ceiling if it was lower (runs with different ceilings share it).
func (ls *Limits) For(cfg Config, ceiling int) *Limiter {
	host, id := endpointOf(cfg)
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.by == nil {
		ls.by = map[string]*Limiter{}
	}
	l := ls.by[id]
	if l == nil {
		l = &Limiter{name: host, ceiling: max(ceiling, 1), probing: true}
		l.limit = float64(l.ceiling)
		ls.by[id] = l
		return l
	}
	l.mu.Lock()
	if ceiling > l.ceiling {
		l.ceiling = ceiling
	}
	l.mu.Unlock()
	return l
}

// States says where each of limiters stands, once each, by endpoint.
func States(limiters ...*Limiter) []LimitState {
	seen := map[*Limiter]bool{}
	var out []LimitState
	for _, l := range limiters {
		if l != nil && !seen[l] {
			seen[l] = true
			out = append(out, l.State())
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Endpoint < out[j].Endpoint })
	return out
}

// endpointOf names where cfg's calls go (the host, for people) and keys its
// limiter: provider, address and key (hashed).
func endpointOf(cfg Config) (host, id string) {
	addr := cfg.BaseURL
	switch {
	case cfg.Vertex != nil:
		addr = vertexBase(cfg) + cfg.Vertex.path()
	case addr == "" && cfg.Provider == ProviderAnthropic:
		addr = "https://api.anthropic.com"
	case addr == "":
		addr = defaultOpenAIURL
	}
	host = addr
	if i := strings.Index(host, "://"); i >= 0 {
		host = host[i+3:]
	}
	if i := strings.IndexByte(host, '/'); i >= 0 {
		host = host[:i]
	}
	key := sha256.Sum256([]byte(cfg.APIKey))
	return host, strings.Join([]string{string(cfg.Provider), addr, hex.EncodeToString(key[:8])}, "\x00")
}

// Counts are what a run's calls met, counted by Chat for the calls made
// under a context from WithCounts.
type Counts struct {
	RateLimited atomic.Int64 // attempts answered 429
}

type countsKey struct{}

// WithCounts returns a context under which Chat counts into c.
func WithCounts(ctx context.Context, c *Counts) context.Context {
	return context.WithValue(ctx, countsKey{}, c)
}
