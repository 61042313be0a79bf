// Package llmtest is a fake OpenAI-compatible chat server for tests: a
// Handler scripts the answers, options add latency, injected faults (rate
// limits, 5xx, malformed bodies, dropped connections) and servers without
// structured output, and Stats and Requests show what happened.
package llmtest

import (
	"context"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Handler answers one decoded chat request.
type Handler func(req *ChatRequest) Reply

// Stats counts what the server did.
type Stats struct {
	// Requests counts chat requests received, faulted ones included.
	Requests int
	// Status counts responses written, by HTTP status.
	Status map[int]int
	// Faults counts faults injected by WithFaults, by kind.
	Faults map[Fault]int
	// Dropped and Hung count replies asking to drop or hang (faults included).
	Dropped, Hung int
	// BatchLines counts the lines of the batches made (each a request
	// answered once the batch ends); Batches the batches.
	BatchLines, Batches int
}

// Server is a running fake. Close it when done.
type Server struct {
	// URL is the base URL to give a client; it ends in /v1.
	URL string

	ts      *httptest.Server
	handler Handler
	opts    options
	closing chan struct{}
	once    sync.Once

	mu          sync.Mutex
	requests    []*ChatRequest
	stats       Stats
	rng         *rand.Rand
	tokens      float64   // WithRateLimit's bucket
	filled      time.Time // when tokens was last brought up to date
	files       map[string][]byte
	holdBatches bool // HoldBatches
	batches     map[string]*fakeBatch
}

// options hold what Option functions set.
type options struct {
	latency      time.Duration
	faultRate    float64
	faultSeed    int64
	noStructured bool
	noHistory    bool
	rate         float64 // requests a second of WithRateLimit; 0: none
	burst        int
	batchPolls   int // polls a batch takes to end (WithBatchPolls)
}

// Option changes how a Server behaves.
type Option func(*options)

// WithLatency delays every response by d.
func WithLatency(d time.Duration) Option {
	return func(o *options) { o.latency = d }
}

// WithFaults answers a share rate (0–1) of requests with a fault instead of
// calling the handler, each kind equally likely, chosen by a generator
// seeded with seed so a test sees the same sequence every time.
func WithFaults(rate float64, seed int64) Option {
	return func(o *options) { o.faultRate, o.faultSeed = rate, seed }
}

// WithoutStructuredOutput makes the server reject response_format
// json_schema with 400, as many local servers do.
func WithoutStructuredOutput() Option {
	return func(o *options) { o.noStructured = true }
}

// WithRateLimit limits requests as a provider does, with a token bucket of
// burst requests refilled at perSecond: a request that finds it empty gets
// a 429 with Retry-After-Ms, and every answer carries OpenAI's headers
// (x-ratelimit-limit-requests, -remaining-requests, -reset-requests).
func WithRateLimit(perSecond float64, burst int) Option {
	return func(o *options) { o.rate, o.burst = perSecond, burst }
}

// WithoutHistory keeps no request once it is answered: Requests returns
// none. For benchmarks, where a server keeping each of tens of thousands
// of requests grows its heap all run, and the CPU its collector spends on
// it is taken from the client sharing the machine.
func WithoutHistory() Option {
	return func(o *options) { o.noHistory = true }
}

// New starts a server answering with h.
func New(h Handler, opts ...Option) *Server {
	s := &Server{handler: h, closing: make(chan struct{})}
	for _, o := range opts {
		o(&s.opts)
	}
	s.rng = rand.New(rand.NewPCG(uint64(s.opts.faultSeed), 0x11c0ffee))
	s.stats = Stats{Status: map[int]int{}, Faults: map[Fault]int{}}
	s.ts = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.ts.URL + "/v1"
	return s
}

// Close releases hanging requests and shuts the server down.
func (s *Server) Close() {
	s.once.Do(func() { close(s.closing) })
	s.ts.Close()
}

// Stats returns a snapshot of the counters.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.Status = maps.Clone(s.stats.Status)
	st.Faults = maps.Clone(s.stats.Faults)
	return st
}

// Requests returns every chat request received so far, in order; none
// with WithoutHistory.
func (s *Server) Requests() []*ChatRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*ChatRequest(nil), s.requests...)
}

// serve handles one HTTP request.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	// Vertex AI's OpenAI-compatible endpoint is
	// /v1/projects/P/locations/L/endpoints/openapi/chat/completions.
	if strings.HasPrefix(r.URL.Path, "/v1/files") || strings.HasPrefix(r.URL.Path, "/v1/batches") {
		s.serveBatch(w, r)
		return
	}
	vertex := strings.HasPrefix(r.URL.Path, "/v1/projects/") && strings.HasSuffix(r.URL.Path, "/endpoints/openapi/chat/completions")
	if r.Method != http.MethodPost || (r.URL.Path != "/v1/chat/completions" && r.URL.Path != "/chat/completions" && !vertex) {
		s.write(w, r, nil, Reply{Status: http.StatusNotFound, Content: "no route " + r.Method + " " + r.URL.Path})
		return
	}
	req, err := decodeRequest(r)
	if err != nil {
		s.write(w, r, nil, Reply{Status: http.StatusBadRequest, Content: err.Error()})
		return
	}
	fault := s.receive(req)
	if s.opts.rate > 0 && !s.admit(w.Header()) {
		s.write(w, r, req, Reply{Status: http.StatusTooManyRequests,
			Content: "Rate limit reached for requests: limit " + strconv.Itoa(s.opts.burst)})
		return
	}
	if !s.pause(r.Context(), s.opts.latency) {
		panic(http.ErrAbortHandler)
	}
	switch {
	case fault != "":
		s.write(w, r, req, s.faultReply(fault))
	case s.opts.noStructured && req.structured():
		s.write(w, r, req, Reply{Status: http.StatusBadRequest,
			Content: "response_format type json_schema is not supported by this server"})
	default:
		s.write(w, r, req, s.handler(req))
	}
}

// receive records req, numbers it and decides whether it gets a fault.
func (s *Server) receive(req *ChatRequest) Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	req.Index = s.stats.Requests
	if !s.opts.noHistory {
		s.requests = append(s.requests, req)
	}
	s.stats.Requests++
	if s.opts.faultRate <= 0 || s.rng.Float64() >= s.opts.faultRate {
		return ""
	}
	f := allFaults[s.rng.IntN(len(allFaults))]
	s.stats.Faults[f]++
	return f
}

// admit takes a token from the bucket if there is one, and writes the
// rate-limit headers as they stand after it.
func (s *Server) admit(h http.Header) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	burst := float64(s.opts.burst)
	if s.filled.IsZero() {
		s.tokens = burst
	} else {
		s.tokens = min(burst, s.tokens+now.Sub(s.filled).Seconds()*s.opts.rate)
	}
	s.filled = now
	ok := s.tokens >= 1
	if ok {
		s.tokens--
	}
	secs := func(n float64) time.Duration { return time.Duration(n / s.opts.rate * float64(time.Second)) }
	h.Set("X-Ratelimit-Limit-Requests", strconv.Itoa(s.opts.burst))
	h.Set("X-Ratelimit-Remaining-Requests", strconv.Itoa(int(s.tokens)))
	h.Set("X-Ratelimit-Reset-Requests", secs(burst-s.tokens).Round(time.Millisecond).String())
	if !ok {
		h.Set("Retry-After-Ms", strconv.FormatInt(secs(1-s.tokens).Milliseconds()+1, 10))
	}
	return ok
}

// pause waits d, and reports false when the client gave up or the server
// is closing first; the caller then aborts, so no empty 200 goes out.
func (s *Server) pause(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
	case <-s.closing:
	}
	return false
}

// count adds one to a counter under the lock.
func (s *Server) count(f func(st *Stats)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(&s.stats)
}
