package judge

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
)

// FuzzRead feeds any text to the judge's answer reader, as a judge could
// answer. It must not panic or hang; an answer it accepts gives every
// rubric metric once, each a whole number from 1 to 5.
func FuzzRead(f *testing.F) {
	f.Add(rubricAnswer(5, 4, 3, "a claim"), "stop")
	f.Add("Here you go:\n```json\n"+rubricAnswer(1, 2, 3)+"\n```", "stop")
	f.Add(`{"factual_adherence": 5, "factual_adherence": 1}`, "stop")
	f.Add(`{{{{{{{{{{{{{{{{{{{{"a": [[[[[[[[[[`, "length")
	f.Add(`{"completeness": 4.0, "x": "\ud800"}`, "stop")
	f.Fuzz(func(t *testing.T, content, finish string) {
		metrics, _, problem := rubricForm.read(context.Background(), content, finish)
		if problem != "" {
			return
		}
		if len(metrics) != 3 {
			t.Fatalf("accepted with %d metrics: %q", len(metrics), content)
		}
		seen := map[string]bool{}
		for _, m := range metrics {
			if seen[m.Name] || m.Value < 1 || m.Value > 5 || m.Value != float64(int(m.Value)) {
				t.Fatalf("accepted metric %+v from %q", m, content)
			}
			seen[m.Name] = true
		}
	})
}

// FuzzDecodeObject holds decodeObject, which cuts a valid object at its
// members, to what the token decoder reads of the same text: the same
// members, keys in order with duplicates, or the same refusal.
func FuzzDecodeObject(f *testing.F) {
	for _, s := range []string{
		rubricAnswer(5, 4, 3, "a claim"), `{}`, ` { } `, `{"a":1,"a":2}`, `{"a" : [1, {"b": "}"}], "c": "\"x\\"}`,
		`{"k\u00e9y": true, "n": null, "f": -1.5e3}`, `{"a":1} trailing`, `{"a":1,}`, `[1]`, `"x"`, `{"\xff": 1}`,
		`{"a": "\ud800"}`, "{\"a\":\n\t1\r}", `{"a":{"b":{"c":[]}}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		obj, keys, ok := decodeObject(s)
		wantObj, wantKeys, wantOK := decodeTokens(s)
		if ok != wantOK || !reflect.DeepEqual(keys, wantKeys) || !reflect.DeepEqual(obj, wantObj) {
			t.Fatalf("%q: read %v %q %q, the decoder %v %q %q", s, ok, keys, obj, wantOK, wantKeys, wantObj)
		}
	})
}

// FuzzPlainString holds plainString to json.Unmarshal: a string it reads
// is the one the decoder reads; what it leaves, the decoder is asked.
func FuzzPlainString(f *testing.F) {
	for _, s := range []string{`"plain"`, `""`, `"é 日本 😀"`, `"a\"b"`, `"tab\there"`, "\"raw\ttab\"", `"\u00e9"`,
		"\"bad \xff\"", `"unterminated`, `'single'`, `"a" "b"`, `"<&>"`, ` "spaced" `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		s, ok := plainString(raw)
		if !ok {
			return
		}
		var want string
		if err := json.Unmarshal(raw, &want); err != nil || s != want {
			t.Fatalf("%q: read %q, json.Unmarshal %q (%v)", raw, s, want, err)
		}
	})
}
