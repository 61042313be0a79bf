// Package redact keeps a run's secrets out of the texts it stores: every
// text that comes from a provider, a tool or a command passes Clean once,
// and a text cut short is cleaned before it is cut (With and Text carry a
// run's secrets down to the places that cut), so that no part of a key
// survives the cut.
package redact

import (
	"context"
	"slices"
	"strings"
)

// Mark is what a text ends (or, for a tail, begins) with where it was cut.
const Mark = "…"

// Replacement is what stands where a secret was.
const Replacement = "[redacted]"

// MinLen is the shortest value taken for a secret, and the shortest part
// of one taken for it at a cut: shorter values would blot out ordinary
// words, and no real key is that short.
const MinLen = 8

// Secrets are the values a run's texts must never carry, longest first so
// that one holding another is replaced whole.
type Secrets []string

// Add returns s with v, when v is long enough and not there yet.
func (s Secrets) Add(v string) Secrets {
	if len(v) < MinLen || slices.Contains(s, v) {
		return s
	}
	s = append(s, v)
	slices.SortStableFunc(s, func(a, b string) int { return len(b) - len(a) })
	return s
}

// Clean returns text with every secret replaced, and every part of one
// (MinLen bytes at least) where the text was cut: a secret's beginning at
// the text's end or before a Mark, and a secret's end at the text's
// beginning or after a Mark.
func (s Secrets) Clean(text string) string {
	for _, v := range s {
		if text == "" {
			return text
		}
		text = strings.ReplaceAll(text, v, Replacement)
		text = cutEnds(text, v)
	}
	return text
}

// cutEnds replaces the parts of v left at the text's cuts.
func cutEnds(text, v string) string {
	var b strings.Builder
	rest := text
	for {
		i := strings.Index(rest, Mark)
		if i < 0 {
			b.WriteString(withoutBeginning(withoutEnd(rest, v), v))
			break
		}
		b.WriteString(withoutBeginning(withoutEnd(rest[:i], v), v))
		b.WriteString(Mark)
		rest = rest[i+len(Mark):]
	}
	return b.String()
}

// withoutEnd replaces the longest beginning of v that part ends with
// (spaces after it aside).
func withoutEnd(part, v string) string {
	body := strings.TrimRight(part, " ")
	if len(body) < MinLen {
		return part
	}
	tail := body[len(body)-MinLen:]
	for k := len(v) - 1; k >= MinLen; k-- {
		if v[k-MinLen:k] == tail && strings.HasSuffix(body, v[:k]) {
			return body[:len(body)-k] + Replacement + part[len(body):]
		}
	}
	return part
}

// withoutBeginning replaces the longest end of v that part begins with
// (spaces before it aside).
func withoutBeginning(part, v string) string {
	body := strings.TrimLeft(part, " ")
	if len(body) < MinLen {
		return part
	}
	head := body[:MinLen]
	for k := len(v) - 1; k >= MinLen; k-- {
		if v[len(v)-k:len(v)-k+MinLen] == head && strings.HasPrefix(body, v[len(v)-k:]) {
			return part[:len(part)-len(body)] + Replacement + body[k:]
		}
	}
	return part
}

type key struct{}

// With returns ctx carrying s, for the texts cut under it.
func With(ctx context.Context, s Secrets) context.Context {
	if len(s) == 0 {
		return ctx
	}
	return context.WithValue(ctx, key{}, s)
}

// Text cleans text of the secrets ctx carries (none: text as it is).
func Text(ctx context.Context, text string) string {
	if ctx == nil {
		return text
	}
	s, _ := ctx.Value(key{}).(Secrets)
	return s.Clean(text)
}
