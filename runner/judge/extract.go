package judge

import (
	"context"
	"encoding/json"
	"strings"
	"unicode/utf8"
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
// An object that is valid JSON with plain keys, as a judge's answer is, is
// cut at its members once checked, without a token decoder: a third of the
// decoder's time, an eighth of its allocations.
func decodeObject(s string) (map[string]json.RawMessage, []string, bool) {
	if json.Valid([]byte(s)) {
		if obj, keys, ok := splitObject(s); ok {
			return obj, keys, true
		}
	}
	return decodeTokens(s)
}

// splitObject cuts a valid JSON text that is one object into its members;
// false when it is not an object or a key has an escape or is not UTF-8,
// which the decoder would rewrite.
func splitObject(s string) (map[string]json.RawMessage, []string, bool) {
	i := skipSpace(s, 0)
	if i == len(s) || s[i] != '{' {
		return nil, nil, false
	}
	obj := map[string]json.RawMessage{}
	var keys []string
	i = skipSpace(s, i+1)
	if s[i] == '}' {
		return obj, nil, true
	}
	for {
		end := stringEnd(s, i) // s[i] is the key's opening quote
		key := s[i+1 : end-1]
		if strings.IndexByte(key, '\\') >= 0 || !utf8.ValidString(key) {
			return nil, nil, false
		}
		i = skipSpace(s, skipSpace(s, end)+1) // past the colon
		end = valueEnd(s, i)
		obj[key] = json.RawMessage(s[i:end])
		keys = append(keys, key)
		i = skipSpace(s, end)
		if s[i] == '}' {
			return obj, keys, true
		}
		i = skipSpace(s, i+1) // past the comma
	}
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// stringEnd is the end of the JSON string that starts at s[i].
func stringEnd(s string, i int) int {
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(s)
}

// valueEnd is the end of the valid JSON value that starts at s[i].
func valueEnd(s string, i int) int {
	switch s[i] {
	case '"':
		return stringEnd(s, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(s); j++ {
			switch s[j] {
			case '"':
				j = stringEnd(s, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return len(s)
	}
	for j := i; j < len(s); j++ { // a number or a literal: up to what follows it
		switch s[j] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return j
		}
	}
	return len(s)
}

// decodeTokens is decodeObject through encoding/json's token decoder.
func decodeTokens(s string) (map[string]json.RawMessage, []string, bool) {
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
