package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"

	openai "github.com/sashabaranov/go-openai"

	"assay/runner/llm/internal/wire"
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
	// InBatch: the request is a line of a batch (CustomID), answered as
	// the batch ends.
	InBatch  bool
	CustomID string

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

	schemaOnce       sync.Once
	schema           map[string]any
	schemaStructured bool
	hasSchema        bool
}

// wireRequest is a chat request as sent, decoded in one pass (package
// wire); go-openai's schema type decodes its schema twice too.
type wireRequest struct {
	Model          string         `json:"model"`
	Messages       []wire.Message `json:"messages"`
	Tools          []openai.Tool  `json:"tools"`
	ResponseFormat *struct {
		Type       openai.ChatCompletionResponseFormatType `json:"type"`
		JSONSchema *struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Schema      json.RawMessage `json:"schema"`
			Strict      bool            `json:"strict"`
		} `json:"json_schema"`
	} `json:"response_format"`
	Temperature         *float64 `json:"temperature"`
	Seed                *int     `json:"seed"`
	MaxTokens           int      `json:"max_tokens"`
	MaxCompletionTokens int      `json:"max_completion_tokens"`
}

// decodeRequest reads and decodes a chat request.
func decodeRequest(r *http.Request) (*ChatRequest, error) {
	body, err := wire.ReadBody(r.ContentLength, 64<<20, r.Body)
	if err != nil {
		return nil, fmt.Errorf("read body: %w", err)
	}
	return decodeBody(body, r.URL.Path, r.Header.Clone())
}

// decodeBody decodes a chat request's body: a live request's, or a batch
// line's.
func decodeBody(body []byte, path string, header http.Header) (*ChatRequest, error) {
	var w wireRequest
	if err := json.Unmarshal(body, &w); err != nil {
		return nil, fmt.Errorf("decode chat request: %w", err)
	}
	req := &ChatRequest{Path: path, Header: header, Body: body,
		Model: w.Model, Tools: w.Tools, Temperature: w.Temperature, Seed: w.Seed,
		MaxTokens: w.MaxTokens, MaxCompletionTokens: w.MaxCompletionTokens}
	if req.MaxCompletionTokens > 0 {
		req.MaxTokens = req.MaxCompletionTokens
	}
	if f := w.ResponseFormat; f != nil {
		req.ResponseFormat = &openai.ChatCompletionResponseFormat{Type: f.Type}
		if s := f.JSONSchema; s != nil {
			req.ResponseFormat.JSONSchema = &openai.ChatCompletionResponseFormatJSONSchema{
				Name: s.Name, Description: s.Description, Strict: s.Strict}
			if len(s.Schema) > 0 && string(s.Schema) != "null" {
				req.ResponseFormat.JSONSchema.Schema = s.Schema
			}
		}
	}
	msgs, bad, err := wire.Messages(w.Messages)
	if err != nil {
		return nil, fmt.Errorf("decode chat request: message %d: content: %w", bad+1, err)
	}
	req.Messages = msgs
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
	r.schemaOnce.Do(func() { r.schema, r.schemaStructured, r.hasSchema = r.findSchema() })
	return r.schema, r.schemaStructured, r.hasSchema
}

func (r *ChatRequest) findSchema() (schema map[string]any, structured bool, ok bool) {
	if r.structured() && r.ResponseFormat.JSONSchema != nil && r.ResponseFormat.JSONSchema.Schema != nil {
		raw, err := r.ResponseFormat.JSONSchema.Schema.MarshalJSON()
		if err == nil {
			if schema, ok := schemas.parse(raw); ok {
				return schema, true, true
			}
		}
	}
	for _, m := range r.Messages {
		if s, ok := fencedSchema(m.Content); ok {
			return s, false, true
		}
	}
	return nil, false, false
}

// schemas keeps the schemas seen, decoded: a judge sends the same one
// with every request. Handlers read a schema and never change it.
var schemas = &schemaCache{m: map[string]map[string]any{}}

type schemaCache struct {
	mu sync.Mutex
	m  map[string]map[string]any
}

func (c *schemaCache) parse(raw []byte) (map[string]any, bool) {
	c.mu.Lock()
	s, ok := c.m[string(raw)]
	c.mu.Unlock()
	if ok {
		return s, true
	}
	if json.Unmarshal(raw, &s) != nil {
		return nil, false
	}
	c.mu.Lock()
	if len(c.m) >= 256 {
		clear(c.m)
	}
	c.m[string(raw)] = s
	c.mu.Unlock()
	return s, true
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

// Structured reports whether the request asks for its answer through
// response_format json_schema (structured output).
func (r *ChatRequest) Structured() bool { return r.structured() }
