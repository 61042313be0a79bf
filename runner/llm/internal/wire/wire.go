// Package wire reads and writes what crosses the wire to and from an
// OpenAI-compatible server: bodies read into room of their size, chat
// messages decoded in one pass, and texts quoted as JSON (AppendString).
// go-openai's ChatCompletionMessage.UnmarshalJSON decodes every message
// twice (and encoding/json scans it once more before calling it): for the
// client, a tenth of the engine's CPU; for the fake server in benchmarks,
// half of its own.
package wire

import (
	"encoding/json"
	"io"
	"reflect"

	openai "github.com/sashabaranov/go-openai"
)

// Message is a chat message as sent: its content a string, null, or a
// list of parts.
type Message struct {
	Role             string               `json:"role"`
	Content          json.RawMessage      `json:"content"`
	Refusal          string               `json:"refusal"`
	Name             string               `json:"name"`
	ReasoningContent string               `json:"reasoning_content"`
	FunctionCall     *openai.FunctionCall `json:"function_call"`
	ToolCalls        []openai.ToolCall    `json:"tool_calls"`
	ToolCallID       string               `json:"tool_call_id"`
}

// Message returns m as go-openai's type, as its UnmarshalJSON would.
func (m *Message) Message() (openai.ChatCompletionMessage, error) {
	out := openai.ChatCompletionMessage{Role: m.Role, Refusal: m.Refusal, Name: m.Name, ReasoningContent: m.ReasoningContent,
		FunctionCall: m.FunctionCall, ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID}
	var err error
	switch {
	case len(m.Content) == 0 || string(m.Content) == "null":
	case m.Content[0] == '[':
		err = json.Unmarshal(m.Content, &out.MultiContent)
	case m.Content[0] == '"':
		err = json.Unmarshal(m.Content, &out.Content)
	default:
		err = &json.UnmarshalTypeError{Value: "content", Type: reflect.TypeFor[string](), Field: "content"}
	}
	return out, err
}

// Messages converts a list of messages; i names the one that failed.
func Messages(in []Message) ([]openai.ChatCompletionMessage, int, error) {
	out := make([]openai.ChatCompletionMessage, len(in))
	for i := range in {
		var err error
		if out[i], err = in[i].Message(); err != nil {
			return nil, i, err
		}
	}
	return out, 0, nil
}

// ReadBody reads a body into room of the size it gives, when it gives one
// up to most: reading as it grows (io.ReadAll, a decoder's buffer) copies
// it again at every doubling.
func ReadBody(size, most int64, body io.Reader) ([]byte, error) {
	if size <= 0 || size > most {
		return io.ReadAll(body)
	}
	data := make([]byte, size)
	_, err := io.ReadFull(body, data)
	return data, err
}
