package scoring

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// ExactMatch scores a multiple-choice response: 1 when the letter it
// chooses is reference (a letter A-D; a choice's index or text is accepted
// too), 0 otherwise, with the chosen letter in Extracted.
func ExactMatch(response string, choices []string, reference string) Outcome {
	out := Outcome{Metric: MetricExactMatch}
	want, ok := referenceLetter(reference, choices)
	if !ok {
		out.Detail = fmt.Sprintf("reference %q is not one of the choices", reference)
		return out
	}
	got, ok := ExtractLetter(response, choices)
	if !ok {
		out.Detail = "no letter found"
		return out
	}
	out.Extracted = got
	out.Value = pass(got == want)
	if got != want {
		out.Detail = fmt.Sprintf("chose %s, reference is %s", got, want)
	}
	return out
}

// referenceLetter reads a reference as a letter: a letter in range, a
// zero-based index (as in the Hugging Face MMLU files), or a choice's text.
func referenceLetter(reference string, choices []string) (string, bool) {
	n := choiceCount(choices)
	ref := strings.TrimSpace(reference)
	if len(ref) == 1 && isLetter(ref[0]) {
		l := strings.ToUpper(ref)
		return l, int(l[0]-'A') < n
	}
	if i, err := strconv.Atoi(ref); err == nil && i >= 0 && i < n {
		return string(rune('A' + i)), true
	}
	return soleChoice(normalizeText(ref), choices)
}

// ExtractLetter finds the letter a response chooses among choices (A, B, …
// one per choice; A-D when choices is empty). It tries, in order, and within
// each rule takes the last occurrence:
//  1. an explicit answer statement: "The answer is (C)", "Answer: c",
//     "The correct option is C", or one followed by a choice's text;
//  2. the whole response being a letter ("**C**", "C.") or one choice's text;
//  3. a selection: "I choose B", "it's B", "option B";
//  4. a letter set apart by markup: "(C)", "**C**", "C) …" opening a line;
//  5. a bare capital letter, not the article "A", not negated ("not A");
//  6. the text of exactly one choice appearing in the response.
func ExtractLetter(response string, choices []string) (string, bool) {
	s := straightQuotes.Replace(response)
	n := choiceCount(choices)
	rules := []func(s string, choices []string, n int) (string, bool){
		fromAnswerStatement, fromWholeResponse, fromSelection, fromMarkedLetter, fromBareLetter, fromChoiceText,
	}
	for _, rule := range rules {
		if l, ok := rule(s, choices, n); ok {
			return l, true
		}
	}
	return "", false
}

// straightQuotes replaces typographic quotes with ASCII ones, so that "isn’t"
// reads as a negation and texts compare equal whichever quotes they use.
var straightQuotes = strings.NewReplacer("\u2019", "'", "\u2018", "'", "\u201c", "\"", "\u201d", "\"")

// choiceCount is how many letters are valid: one per choice, four when the
// choices are unknown, never more than the alphabet.
func choiceCount(choices []string) int {
	switch n := len(choices); {
	case n == 0:
		return 4
	case n > 26:
		return 26
	default:
		return n
	}
}

// answerStatement matches the words that announce an answer, up to where the
// answer itself starts.
var answerStatement = regexp.MustCompile(`(?i)\b(?:answer|option|choice)(?:\s+to\s+(?:this|the)\s+question)?` +
	`[\s*_]*(?:(?:is|was|would\s+be|should\s+be|must\s+be|will\s+be|=|:|-|–)[\s*_]*)+` +
	`(?:(?:therefore|thus|clearly|probably|likely|definitely|indeed|actually|obviously|most\s+likely)[\s,]*)?`)

// fromAnswerStatement applies rule 1 of ExtractLetter.
func fromAnswerStatement(s string, choices []string, n int) (string, bool) {
	matches := answerStatement.FindAllStringIndex(s, -1)
	for k := len(matches) - 1; k >= 0; k-- {
		end := matches[k][1]
		if j := letterAt(s, end, n, lenient); j >= 0 {
			return upper(s[j]), true
		}
		line, _, _ := strings.Cut(s[end:], "\n")
		if l, ok := choicePrefix(normalizeText(line), choices); ok {
			return l, true
		}
	}
	return "", false
}

// fromWholeResponse applies rule 2 of ExtractLetter.
func fromWholeResponse(s string, choices []string, n int) (string, bool) {
	t := strings.Trim(s, markup+".:; \t\r\n")
	if len(t) == 1 && isLetter(t[0]) && int(upper(t[0])[0]-'A') < n {
		return upper(t[0]), true
	}
	return soleChoice(normalizeText(s), choices)
}

// selection matches phrases that pick a letter without calling it the answer.
var selection = regexp.MustCompile(`(?i)\b(?:i\s+(?:would\s+|'d\s+|will\s+)?(?:choose|pick|select|go\s+with)|` +
	`(?:it|that)'s|(?:it|that)\s+(?:is|must\s+be|should\s+be)|option|choice|letter)\b`)

// fromSelection applies rule 3 of ExtractLetter.
func fromSelection(s string, _ []string, n int) (string, bool) {
	matches := selection.FindAllStringIndex(s, -1)
	for k := len(matches) - 1; k >= 0; k-- {
		j := letterAt(s, matches[k][1], n, strict)
		if j >= 0 && !negatedBefore(s, matches[k][0]) && !rejectedAfter(s, j+1) {
			return upper(s[j]), true
		}
	}
	return "", false
}

// How letterAt reads what follows a cue.
const (
	strict  = true
	lenient = false
)

// letterAt finds a choice letter starting at i, past spaces, markup and a
// word such as "option", and returns its index, or -1. A letter must stand
// alone; when exact it must be a capital unless markup wraps it; "A" or "I"
// followed by an ordinary word is the article or pronoun, not a letter.
func letterAt(s string, i, n int, exact bool) int {
	j, wrapped := skipMarkup(s, i)
	for _, word := range []string{"option", "choice", "letter"} {
		if len(s) > j+len(word) && strings.EqualFold(s[j:j+len(word)], word) && !isAlnum(s[j+len(word)]) {
			var w bool
			j, w = skipMarkup(s, j+len(word))
			wrapped = wrapped || w
		}
	}
	if !standsAlone(s, j) {
		return -1
	}
	wrapped = wrapped || (j+1 < len(s) && strings.IndexByte(")]}*_`", s[j+1]) >= 0)
	switch {
	case int(upper(s[j])[0]-'A') >= n:
		return -1
	case exact && s[j] >= 'a' && !wrapped:
		return -1
	case !wrapped && looksLikeWord(s, j):
		return -1
	}
	return j
}

// standsAlone says whether s holds a letter at j with no letter or digit
// right after it.
func standsAlone(s string, j int) bool {
	return j < len(s) && isLetter(s[j]) && (j+1 >= len(s) || !isAlnum(s[j+1]))
}

// skipMarkup returns the index after the spaces and markup at i, and whether
// any markup (as opposed to space) was skipped.
func skipMarkup(s string, i int) (int, bool) {
	wrapped := false
	for i < len(s) {
		switch c := s[i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		case strings.IndexByte("*_`\"([{", c) >= 0:
			wrapped = true
		default:
			return i, wrapped
		}
		i++
	}
	return i, wrapped
}

// upper returns the capital of the ASCII letter c as a string.
func upper(c byte) string {
	return strings.ToUpper(string(c))
}
