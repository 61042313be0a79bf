package scoring

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// numericTolerance is how close two numbers must be to count as equal.
const numericTolerance = 1e-6

// NumericMatch scores a math response against a GSM8K-style reference
// (a worked solution ending "#### N", or a bare number): 1 when the number
// the response gives equals N within 1e-6.
func NumericMatch(response, reference string) Outcome {
	out := Outcome{Metric: MetricNumericMatch}
	want, err := ReferenceNumber(reference)
	if err != nil {
		out.Detail = err.Error()
		return out
	}
	text, got, ok := ExtractNumber(response)
	if !ok {
		out.Detail = "no number found"
		return out
	}
	out.Extracted = text
	out.Value = pass(math.Abs(got-want) <= numericTolerance)
	if out.Value == 0 {
		out.Detail = fmt.Sprintf("answered %s, reference is %s", text, formatFloat(want))
	}
	return out
}

// formatFloat writes v in its shortest exact decimal form.
func formatFloat(v float64) string {
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// errNoNumber reports a reference without a number to compare with.
var errNoNumber = errors.New("no number")

// ReferenceNumber reads the number after the last "####" of a reference, or
// the reference itself when it has no "####"; thousands commas, a currency
// sign and a minus sign are understood.
func ReferenceNumber(reference string) (float64, error) {
	text := reference
	if i := strings.LastIndex(reference, "####"); i >= 0 {
		text = reference[i+len("####"):]
	}
	_, v, ok := firstNumber(text)
	if !ok {
		return 0, fmt.Errorf("reference number: %w in %q", errNoNumber, excerpt(text, 80))
	}
	return v, nil
}

// ExtractNumber finds the number a response gives as its answer and returns
// it as written (sign and commas kept, currency dropped) and as a value. It
// prefers, in order: the number after the last "####"; the last \boxed{};
// the last answer statement ("The answer is 72 clips", "Final answer: = 18"),
// where a number after "=" wins over the first; and else the last number
// in the response.
func ExtractNumber(response string) (string, float64, bool) {
	if i := strings.LastIndex(response, "####"); i >= 0 {
		if text, v, ok := firstNumber(response[i+len("####"):]); ok {
			return text, v, true
		}
	}
	if m := boxed.FindAllStringSubmatch(response, -1); m != nil {
		if text, v, ok := firstNumber(m[len(m)-1][1]); ok {
			return text, v, true
		}
	}
	if text, v, ok := fromNumericStatement(response); ok {
		return text, v, true
	}
	return lastNumber(response)
}

// boxed matches LaTeX's \boxed{…}; group 1 is its content.
var boxed = regexp.MustCompile(`\\boxed\{([^{}]*(?:\{[^{}]*\}[^{}]*)*)\}`)

// numericStatement matches the words that announce a final answer.
var numericStatement = regexp.MustCompile(`(?i)\bfinal\s+answer\b[\s*_:=]*(?:is\b)?|` +
	`\banswer\b[\s*_]*(?:is|would\s+be|will\s+be|should\s+be|:|=)`)

// sentenceEnd matches the end of a sentence: a line break, or a period not
// inside a number.
var sentenceEnd = regexp.MustCompile(`\n|\.(?:\s|$)`)

// fromNumericStatement reads the number of the last answer statement: the
// first number after its last "=", else its first number.
func fromNumericStatement(s string) (string, float64, bool) {
	matches := numericStatement.FindAllStringIndex(s, -1)
	for k := len(matches) - 1; k >= 0; k-- {
		rest := strings.TrimLeft(s[matches[k][1]:], " \t\r\n*_:$")
		if loc := sentenceEnd.FindStringIndex(rest); loc != nil {
			rest = rest[:loc[0]]
		}
		if i := strings.LastIndex(rest, "="); i >= 0 {
			if text, v, ok := firstNumber(rest[i+1:]); ok {
				return text, v, true
			}
		}
		if text, v, ok := firstNumber(rest); ok {
			return text, v, true
		}
	}
	return "", 0, false
}

// number matches a written number: an optional minus (ASCII or Unicode) and
// currency sign, digits with or without thousands commas, and decimals.
var number = regexp.MustCompile(`(-|−)?[$€£]?\s?(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)`)

// firstNumber returns the first number in s.
func firstNumber(s string) (string, float64, bool) {
	m := number.FindAllStringSubmatchIndex(s, -1)
	if m == nil {
		return "", 0, false
	}
	return readNumber(s, m[0])
}

// lastNumber returns the last number in s.
func lastNumber(s string) (string, float64, bool) {
	m := number.FindAllStringSubmatchIndex(s, -1)
	if m == nil {
		return "", 0, false
	}
	return readNumber(s, m[len(m)-1])
}

// readNumber turns one match of number into its text and value. A minus
// right after a letter or digit is subtraction ("16-3"), not a sign.
func readNumber(s string, m []int) (string, float64, bool) {
	digits := s[m[4]:m[5]]
	negative := m[2] >= 0 && (m[2] == 0 || !isAlnum(s[m[2]-1]))
	v, err := strconv.ParseFloat(strings.ReplaceAll(digits, ",", ""), 64)
	if err != nil {
		return "", 0, false
	}
	if negative {
		return "-" + digits, -v, true
	}
	return digits, v, true
}
