package llmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// Reply is what the server answers to one request. The zero Reply is a
// 200 completion with empty content.
type Reply struct {
	// Content is the assistant's text; for a Status ≥ 400 it is the error message.
	Content   string
	ToolCalls []openai.ToolCall
	// Status defaults to 200.
	Status int
	// RetryAfter, when set, is sent as the Retry-After header.
	RetryAfter string
	// Body, when set, is sent verbatim instead of a generated body.
	Body string
	// Hang holds the request open until the client gives up or the server closes.
	Hang bool
	// Drop closes the connection without answering.
	Drop bool
	// Delay waits before answering.
	Delay time.Duration
	// PromptTokens and CompletionTokens override the estimated usage;
	// CachedTokens of the prompt are said read from the provider's cache
	// (prompt_tokens_details.cached_tokens).
	PromptTokens, CompletionTokens, CachedTokens int
}

// write sends reply for req (nil when the request could not be decoded).
func (s *Server) write(w http.ResponseWriter, r *http.Request, req *ChatRequest, reply Reply) {
	if !s.pause(r.Context(), reply.Delay) {
		panic(http.ErrAbortHandler)
	}
	switch {
	case reply.Hang:
		s.count(func(st *Stats) { st.Hung++ })
		select {
		case <-r.Context().Done():
		case <-s.closing:
		}
		panic(http.ErrAbortHandler) // returning would send an empty 200
	case reply.Drop:
		s.count(func(st *Stats) { st.Dropped++ })
		drop(w)
		return
	}
	status := reply.Status
	if status == 0 {
		status = http.StatusOK
	}
	body := []byte(reply.Body)
	if reply.Body == "" {
		body = generate(req, reply, status)
	}
	if reply.RetryAfter != "" {
		w.Header().Set("Retry-After", reply.RetryAfter)
	}
	w.Header().Set("Content-Type", contentType(body))
	w.WriteHeader(status)
	_, _ = w.Write(body)
	s.count(func(st *Stats) { st.Status[status]++ })
}

// drop closes the client's connection without a response.
func drop(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		// Not HTTP/1: aborting the handler resets the stream instead.
		panic(http.ErrAbortHandler)
	}
	_ = conn.Close()
}

// generate builds an OpenAI-style body: an error object for a failure
// status, else a chat completion with realistic usage.
func generate(req *ChatRequest, reply Reply, status int) []byte {
	if status >= 400 {
		msg := reply.Content
		if msg == "" {
			msg = http.StatusText(status)
		}
		b, _ := json.Marshal(map[string]any{"error": map[string]any{
			"message": msg, "type": errorType(status), "param": nil, "code": nil,
		}})
		return b
	}
	msg := completionMessage{Role: openai.ChatMessageRoleAssistant, ToolCalls: numberCalls(reply.ToolCalls)}
	finish := "stop"
	if len(msg.ToolCalls) > 0 {
		finish = "tool_calls"
	}
	if reply.Content != "" || len(msg.ToolCalls) == 0 {
		msg.Content = &reply.Content
	}
	usage := estimateUsage(req, reply)
	model := "fake"
	if req != nil && req.Model != "" {
		model = req.Model
	}
	b, _ := json.Marshal(completion{
		ID:      fmt.Sprintf("chatcmpl-%d", indexOf(req)),
		Object:  "chat.completion",
		Created: time.Now().Unix(),
		Model:   model,
		Choices: []completionChoice{{Message: msg, FinishReason: finish}},
		Usage:   usage,
	})
	return b
}

// completion is the wire form of a chat completion.
type completion struct {
	ID      string             `json:"id"`
	Object  string             `json:"object"`
	Created int64              `json:"created"`
	Model   string             `json:"model"`
	Choices []completionChoice `json:"choices"`
	Usage   openai.Usage       `json:"usage"`
}

// completionChoice is one choice of a completion.
type completionChoice struct {
	Index        int               `json:"index"`
	Message      completionMessage `json:"message"`
	FinishReason string            `json:"finish_reason"`
}

// completionMessage is an assistant message whose content may be null, as
// OpenAI sends it beside tool calls.
type completionMessage struct {
	Role      string            `json:"role"`
	Content   *string           `json:"content"`
	ToolCalls []openai.ToolCall `json:"tool_calls,omitempty"`
}

// numberCalls fills in the IDs and types a test left empty.
func numberCalls(calls []openai.ToolCall) []openai.ToolCall {
	out := make([]openai.ToolCall, len(calls))
	for i, c := range calls {
		if c.ID == "" {
			c.ID = fmt.Sprintf("call_%d", i+1)
		}
		if c.Type == "" {
			c.Type = openai.ToolTypeFunction
		}
		out[i] = c
	}
	return out
}

// errorType names the OpenAI error type of a status.
func errorType(status int) string {
	switch {
	case status == http.StatusTooManyRequests:
		return "rate_limit_exceeded"
	case status >= 500:
		return "server_error"
	default:
		return "invalid_request_error"
	}
}

// contentType labels JSON-looking bodies as JSON, others as text.
func contentType(body []byte) string {
	if t := bytes.TrimSpace(body); len(t) > 0 && (t[0] == '{' || t[0] == '[') {
		return "application/json"
	}
	return "text/plain; charset=utf-8"
}

// indexOf is req's index, 0 for an undecoded request.
func indexOf(req *ChatRequest) int {
	if req == nil {
		return 0
	}
	return req.Index
}
