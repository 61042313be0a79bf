package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// ChatRequest is one decoded chat completion request.
type ChatRequest struct {
	// Index is the request's 0-based position among all chat requests the
	// server received, faulted ones included.
	Index  int
	Path   string
	Header http.Header
	// Body is the JSON exactly as received.
	Body []byte

	Model          string                               `json:"model"`
	Messages       []openai.ChatCompletionMessage       `json:"messages"`
	Tools          []openai.Tool                        `json:"tools"`
	ResponseFormat *openai.ChatCompletionResponseFormat `json:"response_format"`
	// Temperature is nil when the request carried no temperature.
	Temperature *float64 `json:"temperature"`
	Seed        *int     `json:"seed"`
	// MaxTokens is max_tokens, or max_completion_tokens when that was sent.
	MaxTokens           int `json:"max_tokens"`
	MaxCompletionTokens int `json:"max_completion_tokens"`
}

// decodeRequest reads and decodes a chat request.
func decodeRequest(r *http.Request) (*ChatRequest, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, fmt.Errorf("read body: %w", err)
	}
	req := &ChatRequest{Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	if err := json.Unmarshal(body, req); err != nil {
		return nil, fmt.Errorf("decode chat request: %w", err)
	}
	if req.MaxCompletionTokens > 0 {
		req.MaxTokens = req.MaxCompletionTokens
	}
	return req, nil
}

// structured reports whether the request asks for response_format json_schema.
func (r *ChatRequest) structured() bool {
	return r.ResponseFormat != nil && r.ResponseFormat.Type == openai.ChatCompletionResponseFormatTypeJSONSchema
}

// System returns the content of the first system message, or "".
func (r *ChatRequest) System() string {
	for _, m := range r.Messages {
		if m.Role == openai.ChatMessageRoleSystem {
			return m.Content
		}
	}
	return ""
}

// LastUser returns the content of the last user message, or "".
func (r *ChatRequest) LastUser() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == openai.ChatMessageRoleUser {
			return r.Messages[i].Content
		}
	}
	return ""
}

// Schema returns the JSON Schema the answer must follow: the one in
// response_format, else the first ```json fenced block in a message that is
// a schema with properties (how a judge asks servers without structured
// output). structured tells which of the two it was.
func (r *ChatRequest) Schema() (schema map[string]any, structured bool, ok bool) {
	if r.structured() && r.ResponseFormat.JSONSchema != nil && r.ResponseFormat.JSONSchema.Schema != nil {
		raw, err := r.ResponseFormat.JSONSchema.Schema.MarshalJSON()
		if err == nil && json.Unmarshal(raw, &schema) == nil {
			return schema, true, true
		}
	}
	for _, m := range r.Messages {
		if s, ok := fencedSchema(m.Content); ok {
			return s, false, true
		}
	}
	return nil, false, false
}

// fencedSchema finds a ```json block holding an object schema in text.
func fencedSchema(text string) (map[string]any, bool) {
	for rest := text; ; {
		start := strings.Index(rest, "```json")
		if start < 0 {
			return nil, false
		}
		rest = rest[start+len("```json"):]
		end := strings.Index(rest, "```")
		if end < 0 {
			return nil, false
		}
		var s map[string]any
		if json.Unmarshal([]byte(rest[:end]), &s) == nil {
			if _, has := s["properties"]; has {
				return s, true
			}
		}
		rest = rest[end+3:]
	}
}
