package audit

import "testing"

func TestShortenRemovesWhatCarriesNothing(t *testing.T) {
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{"Great question! Paris is the capital of France. I hope this helps!", "Paris is the capital of France.", true},
		{"Paris is the capital of France.\n\nParis is the capital of France. It lies on the Seine.", "Paris is the capital of France.\nIt lies on the Seine.", true},
		{"Paris.", "Paris.", false},
		{"Sure!", "", false},
		{"It is 3.14 or so. Sure.", "It is 3.14 or so.", true},
	} {
		got, ok := Shorten(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("Shorten(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// Padding is content-free: shortening a padded answer gives the answer back.
func TestPaddingShortensAway(t *testing.T) {
	if got, ok := Shorten(Pad("Paris is the capital of France.")); !ok || got != "Paris is the capital of France." {
		t.Errorf("a padded answer shortened: %q %v", got, ok)
	}
}
