package wire

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

// A message decodes as go-openai's own UnmarshalJSON decodes it, and a
// content that is neither a string, null nor a list of parts is an error.
func TestMessageDecodesAsGoOpenAI(t *testing.T) {
	for _, body := range []string{
		`{"role":"assistant","content":"The answer is \u003c4\u003e.\n"}`,
		`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"search","arguments":"{\"q\":\"go\"}"}}]}`,
		`{"role":"assistant","reasoning_content":"hmm","content":"ok","refusal":"no"}`,
		`{"role":"user","content":[{"type":"text","text":"look"},{"type":"image_url","image_url":{"url":"data:,","detail":"low"}}]}`,
		`{"role":"tool","content":"found","tool_call_id":"c1","name":"search"}`,
		`{"role":"assistant"}`,
	} {
		var want openai.ChatCompletionMessage
		if err := json.Unmarshal([]byte(body), &want); err != nil {
			t.Fatal(err)
		}
		var m Message
		if err := json.Unmarshal([]byte(body), &m); err != nil {
			t.Fatal(err)
		}
		got, err := m.Message()
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v (%v)\nwant %+v", body, got, err, want)
		}
	}
	var m Message
	json.Unmarshal([]byte(`{"role":"assistant","content":42}`), &m)
	var typeErr *json.UnmarshalTypeError
	if _, err := m.Message(); !errors.As(err, &typeErr) {
		t.Errorf("a number for content: err %v, want a type error", err)
	}
}
