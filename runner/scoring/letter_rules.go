package scoring

import (
	"regexp"
	"strings"
)

// markedLetter matches a letter set apart by markup; group 1 is the letter.
// Patterns that allow lowercase require the letter to be fully wrapped.
var markedLetter = []*regexp.Regexp{
	regexp.MustCompile(`\(([A-Za-z])\)`),
	regexp.MustCompile(`\[([A-Za-z])\]`),
	regexp.MustCompile(`\*\*\s*\(?([A-Za-z])\)?[.:]?\s*\*\*`),
	regexp.MustCompile(`\*\*\s*\(?([A-Z])[).:]\s`),
	regexp.MustCompile(`\\boxed\{\s*(?:\\text(?:bf)?\{)?\s*\(?([A-Za-z])\)?\s*\}`),
	regexp.MustCompile(`(?m)^[ \t>#*_-]*\(?([A-Z])\s*[).:](?:\s|$)`),
	regexp.MustCompile(`(?m)^[ \t]*([A-Z])[ \t]*$`),
}

// fromMarkedLetter applies rule 4 of ExtractLetter.
func fromMarkedLetter(s string, choices []string, n int) (string, bool) {
	listed := listingMarks(s, choices)
	best := -1
	for _, re := range markedLetter {
		for _, m := range re.FindAllStringSubmatchIndex(s, -1) {
			j := m[2]
			if j > best && int(upper(s[j])[0]-'A') < n && !listed[j] && !negatedBefore(s, m[0]) && !rejectedAfter(s, j+1) {
				best = j
			}
		}
	}
	if best < 0 {
		return "", false
	}
	return upper(s[best]), true
}

// bareLetter matches a capital letter standing alone as a word.
var bareLetter = regexp.MustCompile(`\b[A-Z]\b`)

// fromBareLetter applies rule 5 of ExtractLetter.
func fromBareLetter(s string, choices []string, n int) (string, bool) {
	listed := listingMarks(s, choices)
	matches := bareLetter.FindAllStringIndex(s, -1)
	for k := len(matches) - 1; k >= 0; k-- {
		j := matches[k][0]
		if int(s[j]-'A') >= n || listed[j] || partOfTerm(s, j) || looksLikeWord(s, j) {
			continue
		}
		if !negatedBefore(s, j) && !rejectedAfter(s, j+1) {
			return string(s[j]), true
		}
	}
	return "", false
}

// partOfTerm reports whether the letter at j belongs to a longer term, such
// as "B-tree", "U.S.", "A/B" or "AT&T".
func partOfTerm(s string, j int) bool {
	if j > 0 && strings.IndexByte("-./&'", s[j-1]) >= 0 {
		return true
	}
	if j+1 < len(s) && strings.IndexByte("-/&'", s[j+1]) >= 0 {
		return true
	}
	return j+2 < len(s) && s[j+1] == '.' && isLetter(s[j+2])
}

// wordsAfterLetter are the words that may follow a letter used as an answer
// ("A is correct", "A because …"), unlike the nouns and adjectives that follow
// the article ("A good answer") or the pronoun ("I think").
var wordsAfterLetter = map[string]bool{
	"is":      true,
	"was":     true,
	"seems":   true,
	"looks":   true,
	"appears": true,
	"would":   true,
	"should":  true,
	"could":   true,
	"must":    true,
	"because": true,
	"since":   true,
	"as":      true,
	"and":     true,
	"or":      true,
	"only":    true,
	"too":     true,
	"instead": true,
}

// looksLikeWord reports whether the "A", "a", "I" or "i" at j reads as an
// English word rather than a choice letter.
func looksLikeWord(s string, j int) bool {
	if c := s[j] | 0x20; c != 'a' && c != 'i' {
		return false
	}
	w := firstWordAfter(s, j+1)
	return w != "" && w[0] >= 'a' && w[0] <= 'z' && !wordsAfterLetter[w]
}

// negators are words that, right before a letter, mean it is not chosen.
var negators = map[string]bool{
	"not":     true,
	"isn't":   true,
	"isnt":    true,
	"never":   true,
	"except":  true,
	"nor":     true,
	"than":    true,
	"without": true,
}

// negatedBefore reports whether the word before i negates what follows.
func negatedBefore(s string, i int) bool {
	return negators[lastWordBefore(s, i)]
}

// rejection matches what follows a letter that is being ruled out.
var rejection = regexp.MustCompile(`(?i)^[\s*_)\].:,]*(?:is|was|seems|looks|can\s+be)\s+` +
	`(?:wrong|incorrect|false|not\b|invalid|ruled\s+out|eliminated)`)

// rejectedAfter reports whether the text at i rules out the letter before it.
func rejectedAfter(s string, i int) bool {
	return rejection.MatchString(s[i:min(len(s), i+40)])
}
