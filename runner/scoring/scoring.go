// Package scoring holds the deterministic evaluators: exact_match for
// multiple choice (MMLU), numeric_match for math word problems (GSM8K) and
// code_execution for code (HumanEval), the last through the sandbox.
//
// Each evaluator reads a free-form model response and gives a pass (1) or
// fail (0), with what it extracted from the response and, on a fail, why.
package scoring

import "strings"

// The metric names of the deterministic evaluators, as stored with a score.
const (
	MetricExactMatch    = "exact_match"
	MetricNumericMatch  = "numeric_match"
	MetricCodeExecution = "code_execution"
)

// Outcome is a deterministic evaluator's judgement.
type Outcome struct {
	Metric    string  // "exact_match", "numeric_match" or "code_execution"
	Value     float64 // 1 pass, 0 fail
	Extracted string  // the letter / number / code that was extracted
	Detail    string  // why it failed; for code: reason + stdout/stderr excerpts
}

// pass returns 1 for true and 0 for false, the value of a pass/fail metric.
func pass(ok bool) float64 {
	if ok {
		return 1
	}
	return 0
}

// markup is the set of characters that dress an answer without changing it:
// markdown emphasis and code, brackets, quotes.
const markup = "*_`\"'()[]{}<>"

// isLetter reports whether c is an ASCII letter.
func isLetter(c byte) bool {
	return ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}

// isAlnum reports whether c is an ASCII letter or digit.
func isAlnum(c byte) bool {
	return isLetter(c) || ('0' <= c && c <= '9')
}

// lastWordBefore returns the lowercased word that ends just before i,
// skipping spaces and markup, or "" when there is none.
func lastWordBefore(s string, i int) string {
	end := i
	for end > 0 && (s[end-1] == ' ' || s[end-1] == '\t' || strings.IndexByte(markup, s[end-1]) >= 0) {
		end--
	}
	start := end
	for start > 0 && (isLetter(s[start-1]) || s[start-1] == '\'') {
		start--
	}
	return strings.ToLower(s[start:end])
}

// firstWordAfter returns the word that starts just after one space at i, or
// "" when something else follows.
func firstWordAfter(s string, i int) string {
	if i >= len(s) || s[i] != ' ' {
		return ""
	}
	end := i + 1
	for end < len(s) && isLetter(s[end]) {
		end++
	}
	return s[i+1 : end]
}
