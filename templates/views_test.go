package templates

import "testing"

func TestCountsReadWithTheirThousandsApart(t *testing.T) {
	for n, want := range map[int]string{0: "0", 7: "7", 999: "999", 1000: "1,000", 15000: "15,000", 150000: "150,000",
		1234567: "1,234,567", -1234: "-1,234", -12: "-12"} {
		if got := Int(n); got != want {
			t.Errorf("Int(%d) = %q, want %q", n, got, want)
		}
	}
	if got := Count(150000, "row"); got != "150,000 rows" {
		t.Errorf("Count(150000, row) = %q", got)
	}
	if got := Count(1, "row"); got != "1 row" {
		t.Errorf("Count(1, row) = %q", got)
	}
}
