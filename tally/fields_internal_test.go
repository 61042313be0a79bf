package tally

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// A line's numbers read as strconv reads them, on its fast path (digits)
// and off it (signs, fractions, exponents, long and overflowing numbers).
func TestFieldsReadNumbersAsStrconv(t *testing.T) {
	texts := []string{"0", "7", "007", "42", "123456789012345", "1234567890123456", "9223372036854775807",
		"9223372036854775808", "-3", "+5", "0.5", "1e-05", "-0", "3.0000000000000004", "NaN", "+Inf", "", "1x", "x1", " 1"}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 300 {
		v := math.Float64frombits(rng.Uint64())
		if rng.IntN(3) == 0 {
			v = float64(rng.IntN(1 << 20))
		}
		texts = append(texts, strconv.FormatFloat(v, 'g', -1, 64))
	}
	for _, s := range texts {
		for _, line := range []string{s, s + "\x1fnext"} {
			f := lineFields(line)
			got, err := f.float()
			want, wantErr := strconv.ParseFloat(s, 64)
			if (err == nil) != (wantErr == nil) || (err == nil && math.Float64bits(got) != math.Float64bits(want) && !(math.IsNaN(got) && math.IsNaN(want))) {
				t.Errorf("float %q in %q: %v, %v; strconv: %v, %v", s, line, got, err, want, wantErr)
			}
			if err == nil && strings.Contains(line, "\x1f") {
				if rest, err := f.text(); rest != "next" || err != nil {
					t.Errorf("after float %q: %q, %v", s, rest, err)
				}
			}
			f = lineFields(line)
			n, err := f.int()
			wantN, wantErr := strconv.ParseInt(s, 10, 64)
			if (err == nil) != (wantErr == nil) || n != wantN {
				t.Errorf("int %q in %q: %v, %v; strconv: %v, %v", s, line, n, err, wantN, wantErr)
			}
		}
	}
}

// A line with a field too few or too many is refused, naming the line.
func TestUnreadableLinesAreRefused(t *testing.T) {
	good := "j\x1f1\x1f2\x1f1\x1f0\x1frubric\x1f\ns\x1f3\x1f4\x1fcompleteness\n"
	if _, err := parseLines(good, &names{}); err != nil {
		t.Fatalf("a good row: %v", err)
	}
	for _, bad := range []string{
		"j\x1f1\x1f2\x1f1\x1f0\x1frubric\n",                                                                             // no judge
		"j\x1f1\x1f2\x1f1\x1f0\x1frubric\x1f\x1fmore\n",                                                                 // a field too many
		"j\x1f1\x1f2\x1f1\x1f0\x1frubric\x1f\ns\x1f3\x1f4\n",                                                            // a score without its metric
		"j\x1f1\x1f2\x1f1\x1f0\x1frubric\x1f\ns\x1f3\x1f4\x1fcompleteness\x1fx\n",                                       // a score's field too many
		"j\x1f1\x1f2\x1fone\x1f0\x1frubric\x1f\n",                                                                       // a repetition not a number
		"j\x1f1\x1f2\x1f1\x1f0\x1frubric\x1f\ns\x1f3\x1ffour\x1fcompleteness\n",                                         // a value not a number
		"j\x1f1\x1f2\x1f1\x1f0\x1frubric\x1f\ns\x1f\x1f4\x1fcompleteness\n",                                             // an id left out after no score
		"j\x1f1\x1f2\x1f1\x1f0\x1frubric\x1f\ns\x1f3\x1f4\x1fa\nj\x1f5\x1f2\x1f1\x1f0\x1frubric\x1f\ns\x1f\x1f4\x1fb\n", // after another judgement's
		"k\x1f1\n", // no such line
		"\n",       // an empty line
	} {
		if _, err := parseLines(bad, &names{}); err == nil || !strings.Contains(err.Error(), "unreadable line") {
			t.Errorf("%q read: %v", bad, err)
		}
	}
	if _, err := parseSums("rubric\x1fcompleteness\x1f2\x1f7\x1f25\x1f1\x1f2\n", nil, nil); err != nil {
		t.Errorf("a good sum: %v", err)
	}
	for _, bad := range []string{"rubric\x1fcompleteness\x1f2\x1f7\x1f25\x1f1\n", "rubric\x1fcompleteness\x1f2\x1f7\x1f25\x1f1\x1f2\x1f3\n"} {
		if _, err := parseSums(bad, nil, nil); err == nil || !strings.Contains(err.Error(), "unreadable sums") {
			t.Errorf("sums %q read: %v", bad, err)
		}
	}
}
