package scoring

import (
	"regexp"
	"sort"
	"strings"
)

// normalizeText lowercases s, drops markup and a final period, and collapses
// spaces, so that a choice's text compares equal however it is dressed.
func normalizeText(s string) string {
	s = strings.ToLower(straightQuotes.Replace(s))
	s = strings.Map(func(r rune) rune {
		if strings.ContainsRune(markup, r) {
			return -1
		}
		return r
	}, s)
	return strings.TrimRight(strings.Join(strings.Fields(s), " "), ".")
}

// soleChoice returns the letter of the one choice whose text is text.
func soleChoice(text string, choices []string) (string, bool) {
	found := -1
	for i, c := range choices {
		if text != "" && normalizeText(c) == text {
			if found >= 0 {
				return "", false
			}
			found = i
		}
	}
	return letterOf(found)
}

// choicePrefix returns the letter of the longest choice whose text starts
// text and ends at a word boundary.
func choicePrefix(text string, choices []string) (string, bool) {
	found, longest := -1, 0
	for i, c := range choices {
		c = normalizeText(c)
		if c == "" || !strings.HasPrefix(text, c) || (len(text) > len(c) && isAlnum(text[len(c)])) {
			continue
		}
		if len(c) > longest {
			found, longest = i, len(c)
		} else if len(c) == longest {
			found = -1 // two choices with the same text
		}
	}
	return letterOf(found)
}

// fromChoiceText applies rule 6 of ExtractLetter: the choice texts found in
// the response, ignoring one found only inside a longer one, must be one.
func fromChoiceText(s string, choices []string, _ int) (string, bool) {
	text := normalizeText(withoutListings(s, choices))
	var spans []choiceSpan
	for i, c := range choices {
		spans = appendChoiceSpans(spans, text, normalizeText(c), i)
	}
	sort.Slice(spans, func(a, b int) bool { return spans[a].end-spans[a].start > spans[b].end-spans[b].start })
	found := -1
	for k, sp := range spans {
		inside := false
		for _, longer := range spans[:k] {
			inside = inside || (longer.start <= sp.start && sp.end <= longer.end && longer.choice != sp.choice)
		}
		if inside {
			continue
		}
		if found >= 0 && found != sp.choice {
			return "", false
		}
		found = sp.choice
	}
	return letterOf(found)
}

// choiceSpan is where a choice's text stands in a response.
type choiceSpan struct{ start, end, choice int }

// appendChoiceSpans adds each place where the choice's text c stands in
// text as words of its own.
func appendChoiceSpans(spans []choiceSpan, text, c string, choice int) []choiceSpan {
	for from := 0; c != "" && from < len(text); {
		k := strings.Index(text[from:], c)
		if k < 0 {
			break
		}
		start, end := from+k, from+k+len(c)
		if (start == 0 || !isAlnum(text[start-1])) && (end == len(text) || !isAlnum(text[end])) {
			spans = append(spans, choiceSpan{start, end, choice})
		}
		from = start + 1
	}
	return spans
}

// letterOf returns the letter of choice index i, false for a negative i.
func letterOf(i int) (string, bool) {
	if i < 0 {
		return "", false
	}
	return string(rune('A' + i)), true
}

// listingMark matches a letter that may label a choice, with its markup;
// group 1 is the letter.
var listingMark = regexp.MustCompile(`\(?\b([A-Z])\b[).:]?[ \t]*`)

// listing is a letter that merely restates a choice ("A) London"): the
// start of its mark and the position of the letter.
type listing struct{ start, letter int }

// listings finds the letters that restate the choices: each followed by its
// own choice's text, with at least two different letters doing so. Such
// letters choose nothing.
func listings(s string, choices []string) []listing {
	var found []listing
	letters := map[byte]bool{}
	for _, m := range listingMark.FindAllStringSubmatchIndex(s, -1) {
		line, _, _ := strings.Cut(s[m[1]:], "\n")
		if l, ok := choicePrefix(normalizeText(line), choices); ok && l[0] == s[m[2]] {
			found = append(found, listing{start: m[0], letter: m[2]})
			letters[l[0]] = true
		}
	}
	if len(letters) < 2 {
		return nil
	}
	return found
}

// listingMarks returns the positions of the letters that restate choices.
func listingMarks(s string, choices []string) map[int]bool {
	marks := map[int]bool{}
	for _, l := range listings(s, choices) {
		marks[l.letter] = true
	}
	return marks
}

// withoutListings removes the restated choices from s, each from its mark to
// the next mark on its line or the end of the line.
func withoutListings(s string, choices []string) string {
	found := listings(s, choices)
	var b strings.Builder
	from := 0
	for k, l := range found {
		b.WriteString(s[from:l.start])
		end := len(s)
		if nl := strings.IndexByte(s[l.start:], '\n'); nl >= 0 {
			end = l.start + nl
		}
		if k+1 < len(found) && found[k+1].start < end {
			end = found[k+1].start
		}
		from = end
	}
	b.WriteString(s[from:])
	return b.String()
}
