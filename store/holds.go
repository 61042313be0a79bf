package store

import (
	"database/sql/driver"
	"strings"

	"modernc.org/sqlite"
)

// A search asks SQLite for the responses holding a text with holds(x,
// text), a function of this package: true when x holds text, ASCII letters
// matched whatever their case, as x LIKE '%text%' matches (other letters
// as they are). LIKE steps through x a character at a time; holds looks
// for the text's rarest letter with strings.IndexByte and compares the
// text where it is found. Over 150,000 responses read in one query: a
// phrase of common letters ("explains the mechanism") 500–590 → 157–168
// ms, "not certain" 310–420 → 164–173, "zebra" 196–238 → 123–129; reading
// the responses alone takes 116–140.
func init() {
	sqlite.MustRegisterFunction("holds", &sqlite.FunctionImpl{NArgs: 2, Deterministic: true, VolatileArgs: true,
		Scalar: func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
			x, ok := args[0].(string)
			text, ok2 := args[1].(string)
			if !ok || !ok2 {
				return nil, nil // NULL, as LIKE gives for NULL
			}
			if holdsFold(x, text) {
				return int64(1), nil
			}
			return int64(0), nil
		}})
}

// letterRarity ranks bytes by how rare they are in English text: a space
// and e are the most common; bytes that are not letters rank in the middle.
var letterRarity = func() (r [256]uint8) {
	for i := range r {
		r[i] = 13
	}
	for i, c := range []byte(" etaoinshrdlcumwfgypbvkjxqz") {
		r[c] = uint8(i)
		if 'a' <= c && c <= 'z' {
			r[c-'a'+'A'] = uint8(i)
		}
	}
	return r
}()

// holdsFold reports whether x holds text, ASCII letters of either case
// matching (UTF-8 bytes of other characters are all above ASCII, so they
// match only themselves).
func holdsFold(x, text string) bool {
	if len(text) == 0 {
		return true
	}
	k, lower, upper := anchor(text)
	nextUpper := -1 // where upper is next at or after i; len(x) when nowhere
	for i := k; i <= len(x)-(len(text)-k); {
		at := strings.IndexByte(x[i:], lower)
		if at >= 0 {
			at += i
		}
		if upper != lower {
			if nextUpper < i {
				nextUpper = len(x)
				if j := strings.IndexByte(x[i:], upper); j >= 0 {
					nextUpper = i + j
				}
			}
			if nextUpper < len(x) && (at < 0 || nextUpper < at) {
				at = nextUpper
			}
		}
		if at < 0 {
			return false
		}
		if start := at - k; start+len(text) <= len(x) && equalFoldASCII(x[start:start+len(text)], text) {
			return true
		}
		i = at + 1
	}
	return false
}

// anchor is text's rarest byte, where it is in text, and the byte in
// lower and upper case: looked for in both.
func anchor(text string) (k int, lower, upper byte) {
	for i := 1; i < len(text); i++ {
		if letterRarity[text[i]] > letterRarity[text[k]] {
			k = i
		}
	}
	lower, upper = text[k], text[k]
	switch {
	case 'a' <= lower && lower <= 'z':
		upper = lower - 'a' + 'A'
	case 'A' <= lower && lower <= 'Z':
		lower = upper - 'A' + 'a'
	}
	return k, lower, upper
}

// equalFoldASCII reports whether a and b, of the same length, are equal
// with ASCII letters of either case matching.
func equalFoldASCII(a, b string) bool {
	for i := 0; i < len(b); i++ {
		c, d := a[i], b[i]
		if c == d {
			continue
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if 'A' <= d && d <= 'Z' {
			d += 'a' - 'A'
		}
		if c != d {
			return false
		}
	}
	return true
}
