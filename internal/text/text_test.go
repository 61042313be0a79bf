package text

import "testing"

func TestClip(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"  two\n lines ", 20, "two lines"},
		{"héllo wörld", 6, "héllo…"},
		{"exactly", 7, "exactly"},
	} {
		if got := Clip(c.in, c.n); got != c.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}
