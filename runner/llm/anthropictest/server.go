// Package anthropictest is a fake Anthropic Messages API for tests: POST
// /v1/messages, and Anthropic's models on Google's Vertex AI (POST
// /v1/projects/P/locations/L/publishers/anthropic/models/M:rawPredict or
// :streamRawPredict, the model in the path and anthropic_version in the
// body), answered whole or streamed as server-sent events, with text,
// tool use, usage (cache reads and writes included) and the failures a real
// server has — 429 with Retry-After, 5xx, malformed bodies, dropped and
// hanging connections. A Handler scripts the answers; Requests and Stats
// show what happened. Claude Code and assay's Anthropic client reach it
// through their base URL settings.
package anthropictest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"time"
)

// Handler answers one decoded request.
type Handler func(req *Request) Reply

// Request is one /v1/messages request, decoded.
type Request struct {
	Index  int // 0-based position among all requests
	Header http.Header
	Body   []byte // as received

	Model       string          `json:"model"`
	MaxTokens   int             `json:"max_tokens"`
	System      json.RawMessage `json:"system"` // a string or a list of text blocks
	Messages    []Message       `json:"messages"`
	Tools       []Tool          `json:"tools"`
	ToolChoice  json.RawMessage `json:"tool_choice"`
	Stream      bool            `json:"stream"`
	Temperature *float64        `json:"temperature"`
	// Vertex is set for a request on Vertex AI's path: its project and
	// location, and the anthropic_version its body named.
	Vertex *Vertex `json:"-"`
	// InBatch: the request came in a message batch, as its CustomID.
	InBatch  bool   `json:"-"`
	CustomID string `json:"-"`
}

// Vertex is what a request on Vertex AI's path named.
type Vertex struct {
	Project, Location, Version string
}

// vertexPath matches Anthropic's endpoint on Vertex AI.
var vertexPath = regexp.MustCompile(`^/v1/projects/([^/]+)/locations/([^/]+)/publishers/anthropic/models/([^/:]+):(rawPredict|streamRawPredict)$`)

// Message is one turn of the conversation.
type Message struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"` // a string or a list of blocks
}

// Block is one content block of a message.
type Block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
}

// Tool is one tool offered to the model.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// Reply is what the server answers. The zero Reply is a 200 message with
// empty text.
type Reply struct {
	Text     string
	ToolUses []ToolUse
	// Status defaults to 200; for a failure status Text is the error message.
	Status     int
	RetryAfter string // sent as Retry-After
	Body       string // sent verbatim instead of a generated body
	Hang       bool   // hold the request until the client gives up
	Drop       bool   // close the connection without answering
	Delay      time.Duration
	// Usage overrides the estimated token counts; cache tokens are only
	// ever what a test sets.
	Usage Usage
	Model string // the model the answer names; default: the one asked for
}

// ToolUse is one tool the model calls.
type ToolUse struct {
	Name  string
	Input any
}

// Usage is the token counts of an answer.
type Usage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
}

// Stats counts what the server did.
type Stats struct {
	Requests int         // /v1/messages requests
	Streamed int         // of which answered as a stream
	Status   map[int]int // responses by status
	Other    []string    // requests to any other route, "METHOD /path"
	// Batches counts the message batches made, BatchLines their requests
	// answered (each once, as its batch ends).
	Batches, BatchLines int
}

// Server is a running fake. Close it when done.
type Server struct {
	// URL is the base URL to give a client (ANTHROPIC_BASE_URL); requests
	// go to URL + "/v1/messages".
	URL string

	ts      *httptest.Server
	handler Handler
	closing chan struct{}
	once    sync.Once

	mu          sync.Mutex
	requests    []*Request
	stats       Stats
	batches     map[string]*batch
	batchPolls  int  // SetBatchPolls
	holdBatches bool // HoldBatches
}

// HoldBatches keeps every batch in progress, however often it is polled,
// until it is called again with false (or the batch is cancelled).
func (s *Server) HoldBatches(hold bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.holdBatches = hold
}

// customID is what Anthropic takes as a batch request's custom_id.
var customID = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// New starts a server answering with h.
func New(h Handler) *Server {
	s := &Server{handler: h, closing: make(chan struct{}), stats: Stats{Status: map[int]int{}}}
	s.ts = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.ts.URL
	return s
}

// Close releases hanging requests and shuts the server down.
func (s *Server) Close() {
	s.once.Do(func() { close(s.closing) })
	s.ts.Close()
}

// Requests returns every /v1/messages request received so far, in order.
func (s *Server) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Request(nil), s.requests...)
}

// Stats returns a snapshot of the counters.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.Status = maps.Clone(s.stats.Status)
	st.Other = append([]string(nil), s.stats.Other...)
	return st
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/v1/messages/batches") {
		s.serveBatch(w, r)
		return
	}
	vertex := vertexPath.FindStringSubmatch(r.URL.Path)
	if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" && vertex == nil {
		s.mu.Lock()
		s.stats.Other = append(s.stats.Other, r.Method+" "+r.URL.Path)
		s.mu.Unlock()
		s.writeError(w, http.StatusNotFound, "not_found_error", "no route "+r.Method+" "+r.URL.Path, "")
		return
	}
	req, err := readRequest(r, vertex)
	if err != nil {
		s.writeError(w, http.StatusBadRequest, "invalid_request_error", "the body is not a messages request: "+err.Error(), "")
		return
	}
	s.mu.Lock()
	req.Index = len(s.requests)
	s.requests = append(s.requests, req)
	s.stats.Requests++
	s.mu.Unlock()
	reply := s.handler(req)
	if !s.pause(r.Context(), reply.Delay) {
		panic(http.ErrAbortHandler)
	}
	s.reply(w, r, req, reply)
}

// readRequest reads a messages request: on Vertex AI's path (vertex, its
// matches) with its version in the body and its model in the path.
func readRequest(r *http.Request, vertex []string) (*Request, error) {
	body, err := io.ReadAll(r.Body)
	req := &Request{Header: r.Header.Clone(), Body: body}
	if err == nil {
		err = json.Unmarshal(body, req)
	}
	if err == nil && vertex != nil {
		var v struct {
			Version string          `json:"anthropic_version"`
			Model   json.RawMessage `json:"model"`
		}
		json.Unmarshal(body, &v)
		switch {
		case v.Version == "":
			err = fmt.Errorf("anthropic_version: required on Vertex AI")
		case v.Model != nil:
			err = fmt.Errorf("model: the model goes in the path on Vertex AI, not the body")
		}
		req.Model, req.Vertex = vertex[3], &Vertex{Project: vertex[1], Location: vertex[2], Version: v.Version}
		req.Stream = req.Stream || vertex[4] == "streamRawPredict"
	}
	return req, err
}

// reply answers a request as its reply says: a hang, a dropped
// connection, an error, a body as given, a stream or a message.
func (s *Server) reply(w http.ResponseWriter, r *http.Request, req *Request, reply Reply) {
	switch {
	case reply.Hang:
		select {
		case <-r.Context().Done():
		case <-s.closing:
		}
		panic(http.ErrAbortHandler)
	case reply.Drop:
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			conn.Close()
			return
		}
		panic(http.ErrAbortHandler)
	case reply.Status >= 400:
		s.writeError(w, reply.Status, errorType(reply.Status), reply.Text, reply.RetryAfter)
	case reply.Body != "":
		w.Header().Set("Content-Type", "application/json")
		s.status(w, http.StatusOK)
		io.WriteString(w, reply.Body)
	case req.Stream:
		s.stream(w, req, reply)
	default:
		w.Header().Set("Content-Type", "application/json")
		s.status(w, http.StatusOK)
		json.NewEncoder(w).Encode(message(req, reply))
	}
}

func (s *Server) status(w http.ResponseWriter, code int) {
	w.WriteHeader(code)
	s.mu.Lock()
	s.stats.Status[code]++
	s.mu.Unlock()
}

// pause waits d; false when the client gave up or the server is closing.
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

// writeError sends the API's error object.
func (s *Server) writeError(w http.ResponseWriter, code int, kind, msg, retryAfter string) {
	if msg == "" {
		msg = http.StatusText(code)
	}
	if retryAfter != "" {
		w.Header().Set("Retry-After", retryAfter)
	}
	w.Header().Set("Content-Type", "application/json")
	s.status(w, code)
	json.NewEncoder(w).Encode(map[string]any{"type": "error", "error": map[string]any{"type": kind, "message": msg}})
}

func errorType(code int) string {
	switch {
	case code == http.StatusTooManyRequests:
		return "rate_limit_error"
	case code == 529:
		return "overloaded_error"
	case code >= 500:
		return "api_error"
	case code == http.StatusUnauthorized:
		return "authentication_error"
	}
	return "invalid_request_error"
}

// content is a reply's content blocks, tool uses numbered by request.
func content(req *Request, reply Reply) []map[string]any {
	var blocks []map[string]any
	if reply.Text != "" || len(reply.ToolUses) == 0 {
		blocks = append(blocks, map[string]any{"type": "text", "text": reply.Text})
	}
	for i, u := range reply.ToolUses {
		input := u.Input
		if input == nil {
			input = map[string]any{}
		}
		blocks = append(blocks, map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_%02d_%02d", req.Index, i+1),
			"name": u.Name, "input": input})
	}
	return blocks
}

// message is the whole answer as a non-streaming response.
func message(req *Request, reply Reply) map[string]any {
	stop := "end_turn"
	if len(reply.ToolUses) > 0 {
		stop = "tool_use"
	}
	return map[string]any{"id": fmt.Sprintf("msg_%04d", req.Index), "type": "message", "role": "assistant",
		"model": modelOf(req, reply), "content": content(req, reply), "stop_reason": stop, "stop_sequence": nil,
		"usage": usageOf(req, reply)}
}

func modelOf(req *Request, reply Reply) string {
	if reply.Model != "" {
		return reply.Model
	}
	return req.Model
}

// usageOf is the reply's usage, estimated at four characters a token when
// the test set none.
func usageOf(req *Request, reply Reply) Usage {
	u := reply.Usage
	if u.InputTokens == 0 {
		u.InputTokens = max(1, len(req.Body)/4)
	}
	if u.OutputTokens == 0 {
		out := len(reply.Text)
		for _, t := range reply.ToolUses {
			b, _ := json.Marshal(t.Input)
			out += len(t.Name) + len(b)
		}
		u.OutputTokens = max(1, out/4)
	}
	return u
}
