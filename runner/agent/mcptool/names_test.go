package mcptool

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestFunctionNamesFitOpenAI(t *testing.T) {
	valid := regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	long := strings.Repeat("very_long_tool_name_", 5)
	tests := []struct{ in, want string }{
		{"echo", "echo"},
		{"graph__query", "graph__query"},
		{"search.docs/v2 beta", "search_docs_v2_beta"},
		{"", "tool"},
		{"résumé", "r_sum_"},
		{long + "a", ""},
		{long + "b", ""},
	}
	seen := map[string]string{}
	for _, tt := range tests {
		got := functionName(tt.in)
		if !valid.MatchString(got) || tt.want != "" && got != tt.want {
			t.Errorf("functionName(%q) = %q, want %q matching OpenAI's pattern", tt.in, got, tt.want)
		}
		if other, dup := seen[got]; dup {
			t.Errorf("functionName(%q) = functionName(%q) = %q", tt.in, other, got)
		}
		seen[got] = tt.in
	}
}

func TestUniqueNames(t *testing.T) {
	ts := &Toolset{byName: map[string]toolRef{}}
	long := strings.Repeat("x", 64)
	for _, in := range []string{"echo", "echo", "echo", long, long} {
		n := ts.unique(in)
		if _, taken := ts.byName[n]; taken || len(n) > 64 {
			t.Errorf("unique(%q) = %q: taken or too long", in, n)
		}
		ts.byName[n] = toolRef{}
	}
}

func TestTruncate(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{strings.Repeat("a", 30), 20, "aaaaa …[truncated]"},
		{strings.Repeat("é", 30), 20, "éé …[truncated]"},
	}
	for _, tt := range tests {
		got := Truncate(tt.in, tt.n)
		if got != tt.want || len(got) > tt.n || !utf8.ValidString(got) {
			t.Errorf("Truncate(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}
