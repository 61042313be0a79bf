package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

// The body a client sends is the one go-openai would send for the same
// request, but for the temperature, which it sends exactly (0 included)
// where go-openai rounds it to a float32 or drops it.
func TestEncodeChatMatchesGoOpenAI(t *testing.T) {
	seed, zero, warm := 7, 0.0, 0.7
	call := openai.ToolCall{ID: "call_1", Type: openai.ToolTypeFunction,
		Function: openai.FunctionCall{Name: "search", Arguments: `{"q":"<go> & \"json\""}`}}
	tool := openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
		Name: "search", Description: "Search the web.",
		Parameters: json.RawMessage(`{"type": "object", "properties": {"temperature": {"type": "number"}}}`)}}
	schema := json.RawMessage(`{"type":"object","properties":{"score":{"enum":[1,2,3],"type":"integer"}},"required":["score"]}`)
	checked, err := NewSchema([]byte("{\"type\": \"object\",\n \"properties\": {\"score\": {\"enum\": [1, 2, 3], \"type\": \"integer\"}}, \"required\": [\"score\"]}"))
	if err != nil {
		t.Fatal(err)
	}
	var fields []string // a rubric of many metrics: a schema larger than the room a body has to spare
	for i := range 40 {
		fields = append(fields, fmt.Sprintf(`"metric_%d":{"type":"integer","enum":[1,2,3,4,5],"description":"How well the answer covers part %d."}`, i, i))
	}
	large, err := NewSchema([]byte(`{"type":"object","properties":{` + strings.Join(fields, ",") + `}}`))
	if err != nil {
		t.Fatal(err)
	}
	conversation := []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: "Judge <fairly> & \"well\".\n\tUnicode: é – 😀 \u2028"},
		{Role: openai.ChatMessageRoleUser, MultiContent: []openai.ChatMessagePart{
			{Type: openai.ChatMessagePartTypeText, Text: "look"},
			{Type: openai.ChatMessagePartTypeImageURL, ImageURL: &openai.ChatMessageImageURL{URL: "data:image/png;base64,AA==", Detail: openai.ImageURLDetailLow}}}},
		{Role: openai.ChatMessageRoleAssistant, ToolCalls: []openai.ToolCall{call}, ReasoningContent: "think"},
		{Role: openai.ChatMessageRoleTool, Content: "found", ToolCallID: "call_1", Name: "search"},
	}
	for _, c := range []struct {
		name        string
		req         openai.ChatCompletionRequest
		temperature *float64
	}{
		{name: "one turn", req: openai.ChatCompletionRequest{Model: "m", Messages: conversation[:1]}},
		{name: "tools and parts", req: openai.ChatCompletionRequest{Model: "m", Messages: conversation, Tools: []openai.Tool{tool}, Seed: &seed, MaxTokens: 64}, temperature: &zero},
		{name: "schema", temperature: &warm, req: openai.ChatCompletionRequest{Model: "j", Messages: conversation[:1], MaxCompletionTokens: 9,
			ResponseFormat: &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
				JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{Name: "verdict", Description: "d", Schema: schema, Strict: true}}}},
		{name: "checked schema", req: openai.ChatCompletionRequest{Model: "j", Messages: conversation[:1],
			ResponseFormat: &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
				JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{Name: "verdict", Schema: checked, Strict: true}}}},
		{name: "large checked schema", req: openai.ChatCompletionRequest{Model: "j", Messages: conversation[:1],
			ResponseFormat: &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
				JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{Name: "verdict", Schema: large, Strict: true}}}},
		{name: "json object", req: openai.ChatCompletionRequest{Model: "j", Messages: conversation[:1],
			ResponseFormat: &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONObject}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := encodeChat(&c.req, c.temperature)
			if err != nil {
				t.Fatal(err)
			}
			if c.req.ResponseFormat != nil && len(got) > sizeOf(&c.req) {
				t.Errorf("a body of %d bytes outgrew the %d it was given room for: a judge's request grew its buffer", len(got), sizeOf(&c.req))
			}
			want, err := json.Marshal(c.req)
			if err != nil {
				t.Fatal(err)
			}
			var g, w map[string]any
			if err := json.Unmarshal(got, &g); err != nil {
				t.Fatalf("not JSON: %v\n%s", err, got)
			}
			json.Unmarshal(want, &w)
			delete(w, "temperature")
			if c.temperature != nil {
				w["temperature"] = *c.temperature
			}
			if !reflect.DeepEqual(g, w) {
				t.Errorf("body\n got %s\nwant %s", got, want)
			}
		})
	}
	bad := openai.ChatCompletionRequest{Model: "m", Messages: []openai.ChatCompletionMessage{
		{Role: "user", Content: "a", MultiContent: []openai.ChatMessagePart{{Type: openai.ChatMessagePartTypeText, Text: "b"}}}}}
	if _, err := encodeChat(&bad, nil); !errors.Is(err, openai.ErrContentFieldsMisused) {
		t.Errorf("content and parts both set: err %v", err)
	}
	if s, err := NewSchema([]byte(`{"type": "object",`)); err == nil {
		t.Errorf("a schema that is not JSON was checked: %s", s.raw)
	}
	if got, _ := json.Marshal(checked); string(got) != string(schema) {
		t.Errorf("a checked schema is written as %s, want it compact: %s", got, schema)
	}
	nan := math.NaN()
	if body, err := encodeChat(&openai.ChatCompletionRequest{Model: "m"}, &nan); err == nil {
		t.Errorf("a NaN temperature was sent: %s", body)
	}
}

// A message of text alone is written byte for byte as encoding/json writes
// its type, field order and omitted empty fields included.
func TestTextMessageWrittenAsEncodingJSON(t *testing.T) {
	for _, m := range []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleUser, Content: "What is 1 + 1?"},
		{Role: openai.ChatMessageRoleSystem, Content: "Judge <fairly> & \"well\".\n\tUnicode: é – 😀 \u2028 \x01 bad \xff"},
		{Role: openai.ChatMessageRoleAssistant},
		{Role: openai.ChatMessageRoleTool, Content: "found", ToolCallID: "call_1", Name: "search"},
		{Role: openai.ChatMessageRoleTool, ToolCallID: "call_<2>"},
		{Role: "", Name: "nobody"},
	} {
		var fast, slow bytes.Buffer
		if err := writeMessage(&fast, &m); err != nil {
			t.Fatal(err)
		}
		if err := writeJSON(&slow, textMessage(m)); err != nil {
			t.Fatal(err)
		}
		if fast.String() != slow.String() {
			t.Errorf("message %+v\n got %s\nwant %s", m, fast.String(), slow.String())
		}
	}
}
