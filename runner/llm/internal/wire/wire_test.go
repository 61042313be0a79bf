package wire

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
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

// AppendString writes every string as encoding/json does.
func TestAppendStringAsEncodingJSON(t *testing.T) {
	for _, s := range appendStringSeeds {
		checkAppendString(t, s)
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range appendStringSeeds {
		f.Add(s)
	}
	f.Fuzz(checkAppendString)
}

var appendStringSeeds = []string{"", "plain text", `a "quoted" \ back\slash`, "tab\tnew\nline\rcr\bbs\fff",
	"\x00\x01\x1f\x7f", "<b>&amp;</b>", "é ü 日本語 🙂", "line\u2028para\u2029", "bad \xff utf-8 \xc3", "\xe2\x80", "\xed\xa0\x80 surrogate",
	strings.Repeat("Score the response against the reference. ", 100)}

func checkAppendString(t *testing.T, s string) {
	want, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if got := AppendString([]byte("x"), s); string(got) != "x"+string(want) {
		t.Errorf("AppendString(%q) = %s, want %s", s, got[1:], want)
	}
}
