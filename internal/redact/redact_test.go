package redact

import (
	"context"
	"strings"
	"testing"
)

func TestCleanReplacesSecretsWholeAndCut(t *testing.T) {
	const key = "sk-live-0123456789abcdef"
	s := Secrets{}.Add(key).Add("short").Add(key)
	if len(s) != 1 {
		t.Fatalf("secrets %q: want the key alone (once, and no value under %d bytes)", s, MinLen)
	}
	for _, c := range []struct{ in, want string }{
		{"key " + key + " refused", "key [redacted] refused"},
		{"status 401: key sk-live-01234…", "status 401: key [redacted]…"},
		{"status 401: key sk-live-01234… (after 3 attempts)", "status 401: key [redacted]… (after 3 attempts)"},
		{"tool said sk-live-0123 …[truncated]", "tool said [redacted] …[truncated]"},
		{"… 456789abcdef was refused", "… [redacted] was refused"},
		{"56789abcdef was refused", "[redacted] was refused"},
		{"ends in sk-live-0", "ends in [redacted]"},
		// Under MinLen bytes of a key at a cut, and a key's middle, stay.
		{"key sk-live…", "key sk-live…"},
		{"a 0123456789 in the middle", "a 0123456789 in the middle"},
		{"nothing … here … at all", "nothing … here … at all"},
	} {
		if got := s.Clean(c.in); got != c.want {
			t.Errorf("Clean(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// A text cut under a context that carries the run's secrets is cleaned
// before its cut: a key across the cut leaves nothing of itself.
func TestTextCleansWithTheSecretsOfItsContext(t *testing.T) {
	const key = "sk-live-0123456789abcdef"
	ctx := With(context.Background(), Secrets{}.Add(key))
	if got := Text(ctx, "a "+key); got != "a [redacted]" {
		t.Errorf("Text = %q", got)
	}
	if got := Text(context.Background(), "a "+key); !strings.Contains(got, key) {
		t.Errorf("a context with no secrets changed the text: %q", got)
	}
}
