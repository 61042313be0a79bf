package judge

import (
	"context"
	"encoding/json"
	"strings"
)

// maxDecodes bounds the objects extract decodes in one answer, and
// scanBudget (times the answer's length) the bytes it reads while pairing
// braces: an answer built of thousands of unclosed or nested braces costs
// a few passes over it, not one pass per brace.
const (
	maxDecodes = 64
	scanBudget = 16
)

// extract finds the answer's JSON object: bare, in a ``` fence, or amid
// prose. Of the objects found it takes the first with one of the form's
// fields, so an example in the prose does not win over the answer. It also
// returns the object's keys in order, duplicates kept. It stops when ctx is
// done.
func (f *form) extract(ctx context.Context, content string) (map[string]json.RawMessage, []string, bool) {
	var first map[string]json.RawMessage
	var firstKeys []string
	budget := scanBudget*len(content) + 1<<20
	decodes := 0
	for i := strings.IndexByte(content, '{'); i >= 0; i = nextBrace(content, i) {
		if decodes >= maxDecodes || budget < 0 || ctx.Err() != nil {
			break
		}
		end := matchBrace(content[i:])
		if end < 0 {
			budget -= len(content) - i
			continue
		}
		budget -= 2 * end
		decodes++
		obj, keys, ok := decodeObject(content[i : i+end])
		if !ok {
			continue
		}
		for _, fd := range f.fields {
			if _, ok := obj[fd.name]; ok {
				return obj, keys, true
			}
		}
		if first == nil {
			first, firstKeys = obj, keys
		}
	}
	return first, firstKeys, first != nil
}

// nextBrace is the offset of the next '{' after i, or -1.
func nextBrace(s string, i int) int {
	next := strings.IndexByte(s[i+1:], '{')
	if next < 0 {
		return -1
	}
	return i + 1 + next
}

// matchBrace returns the length of the balanced {…} that s starts with,
// skipping braces inside JSON strings, or -1 when it never closes.
func matchBrace(s string) int {
	depth := 0
	inString, escaped := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case inString:
			inString = c != '"'
		case c == '"':
			inString = true
		case c == '{':
			depth++
		case c == '}':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return -1
}

// decodeObject decodes one JSON object, and lists its keys in order with
// any duplicates, which a map would hide; false when s is not one object.
func decodeObject(s string) (map[string]json.RawMessage, []string, bool) {
	dec := json.NewDecoder(strings.NewReader(s))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, nil, false
	}
	obj := map[string]json.RawMessage{}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, false
		}
		key, ok := tok.(string)
		if !ok {
			return nil, nil, false
		}
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, nil, false
		}
		obj[key] = value
		keys = append(keys, key)
	}
	if _, err := dec.Token(); err != nil {
		return nil, nil, false
	}
	return obj, keys, true
}
