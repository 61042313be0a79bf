package judge

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"assay/config"
)

// read parses and validates an answer. problem is "" for a valid answer,
// else every fault found, e.g. "completeness: 7 is outside 1–5".
func (f *form) read(ctx context.Context, content, finishReason string) (metrics []Metric, claims []string, problem string) {
	obj, keys, ok := f.extract(ctx, content)
	if !ok {
		if finishReason == "length" {
			return nil, nil, "the answer was cut off at the token limit before its JSON object ended"
		}
		return nil, nil, "no JSON object in the answer"
	}
	problems := f.repeated(keys)
	values := map[string]float64{}
	texts := map[string]string{}
	for _, fd := range f.fields {
		raw, present := obj[fd.name]
		var p string
		switch {
		case !present:
			p = "missing"
		case fd.kind == score:
			values[fd.name], p = number(raw, fd.scale)
		case fd.kind == text:
			texts[fd.name], p = nonEmpty(raw)
		default:
			claims, p = stringList(raw)
		}
		if p != "" {
			problems = append(problems, fd.name+": "+p)
		}
	}
	if len(problems) > 0 {
		return nil, nil, strings.Join(problems, "; ")
	}
	for _, fd := range f.fields {
		if fd.kind == score {
			metrics = append(metrics, Metric{Name: fd.name, Value: values[fd.name], Reasoning: texts[fd.name+"_reasoning"]})
		}
	}
	if f.derive != nil {
		metrics = f.derive(metrics)
	}
	return metrics, claims, ""
}

// repeated names the form's fields that the answer gives more than once:
// which of two values the judge meant cannot be known.
func (f *form) repeated(keys []string) []string {
	var out []string
	for _, fd := range f.fields {
		if n := count(keys, fd.name); n > 1 {
			out = append(out, fmt.Sprintf("%s: given %d times", fd.name, n))
		}
	}
	return out
}

func count(list []string, s string) int {
	n := 0
	for _, v := range list {
		if v == s {
			n++
		}
	}
	return n
}

// number reads a score: a JSON number within the scale's bounds, and
// integral on an integral scale (4.0 passes for 1–5, 4.5 does not).
func number(raw json.RawMessage, sc config.Scale) (float64, string) {
	if !json.Valid(raw) {
		return 0, "not valid JSON"
	}
	// Valid JSON that starts like a number is one, and ParseFloat reads
	// every JSON number.
	n := string(bytes.TrimSpace(raw))
	if n[0] != '-' && (n[0] < '0' || n[0] > '9') {
		return 0, fmt.Sprintf("%s is not a number", raw)
	}
	x, err := strconv.ParseFloat(n, 64)
	if err != nil {
		return 0, fmt.Sprintf("%s is not a number", raw)
	}
	lo, hi := sc.Bounds()
	switch {
	case sc.Integral() && x != math.Trunc(x):
		return 0, fmt.Sprintf("%s is not an integer", n)
	case x < lo || x > hi:
		return 0, fmt.Sprintf("%s is outside %s", n, sc)
	}
	return x, ""
}

// nonEmpty reads a string that says something.
func nonEmpty(raw json.RawMessage) (string, string) {
	s, ok := plainString(raw)
	if !ok {
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", "not a string"
		}
	}
	if strings.TrimSpace(s) == "" {
		return "", "empty"
	}
	return s, ""
}

// stringList reads an array of strings; an empty array is fine, null is not.
func stringList(raw json.RawMessage) ([]string, string) {
	var ss []string
	if err := json.Unmarshal(raw, &ss); err != nil || ss == nil {
		return nil, "not an array of strings"
	}
	return ss, ""
}

// plainString reads a JSON string without escapes, as most reasonings are,
// without encoding/json (a judge's answer has one per metric): its bytes
// between the quotes, when they hold no quote, backslash or control
// character and are valid UTF-8, are the string json.Unmarshal reads.
func plainString(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	in := raw[1 : len(raw)-1]
	for _, b := range in {
		if b < 0x20 || b == '"' || b == '\\' {
			return "", false
		}
	}
	if !utf8.Valid(in) {
		return "", false
	}
	return string(in), true
}
