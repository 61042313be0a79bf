// Package assert checks answers against a run's assertions: deterministic
// checks written in its evaluators (contains, regex, json_schema, lengths,
// latency, cost), each a pass (1) or fail (0) metric of its own, with a
// sentence that says what was looked for and what was found.
package assert

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"assay/config"
	"assay/internal/text"
	"assay/store"
)

// Answer is what an assertion looks at: the answer's text, how long it took
// and what it cost.
type Answer struct {
	Text      string
	LatencyMS int64
	CostUSD   float64
}

// Check tells whether an answer passes a, and why in a sentence.
func Check(a config.Assertion, ans Answer) (bool, string) {
	if check, ok := checks[a.Kind]; ok {
		return check(a, ans)
	}
	return false, fmt.Sprintf("unknown assertion %q", a.Kind)
}

// checks are the assertions' checks, by kind.
var checks = map[string]func(config.Assertion, Answer) (bool, string){
	config.AssertContains:    checkContains,
	config.AssertNotContains: checkContains,
	config.AssertEquals:      checkEquals,
	config.AssertStartsWith:  checkStartsWith,
	config.AssertRegex:       checkRegex,
	config.AssertJSONValid:   checkJSONValid,
	config.AssertJSONSchema:  checkJSONSchema,
	config.AssertMaxLength:   checkLength,
	config.AssertMinLength:   checkLength,
	config.AssertLatency: func(a config.Assertion, ans Answer) (bool, string) {
		return float64(ans.LatencyMS) < a.Limit, fmt.Sprintf("answered in %d ms, under %g wanted", ans.LatencyMS, a.Limit)
	},
	config.AssertCost: func(a config.Assertion, ans Answer) (bool, string) {
		return ans.CostUSD < a.Limit, fmt.Sprintf("cost $%.6f, under $%g wanted", ans.CostUSD, a.Limit)
	},
}

func checkContains(a config.Assertion, ans Answer) (bool, string) {
	answer := ans.Text
	i := index(answer, a.Text, a.CaseSensitive)
	found := i >= 0
	where := "not found"
	if found {
		where = fmt.Sprintf("found at character %d: …%s…", utf8.RuneCountInString(answer[:i])+1, around(answer, i, len(a.Text)))
	}
	if a.Kind == config.AssertContains {
		return found, fmt.Sprintf("looked for %q%s: %s", a.Text, caseNote(a.CaseSensitive), where)
	}
	return !found, fmt.Sprintf("must not contain %q%s: %s", a.Text, caseNote(a.CaseSensitive), where)
}

func checkEquals(a config.Assertion, ans Answer) (bool, string) {
	got := strings.TrimSpace(ans.Text)
	ok := got == a.Text || !a.CaseSensitive && strings.EqualFold(got, a.Text)
	return ok, fmt.Sprintf("wanted exactly %q%s, the answer is %q", a.Text, caseNote(a.CaseSensitive), text.Clip(got, 120))
}

func checkStartsWith(a config.Assertion, ans Answer) (bool, string) {
	got := strings.TrimSpace(ans.Text)
	ok := strings.HasPrefix(got, a.Text) || !a.CaseSensitive && strings.HasPrefix(strings.ToLower(got), strings.ToLower(a.Text))
	return ok, fmt.Sprintf("wanted it to start with %q%s; it starts %q", a.Text, caseNote(a.CaseSensitive), text.Clip(got, len(a.Text)+20))
}

func checkRegex(a config.Assertion, ans Answer) (bool, string) {
	re, err := regexp.Compile(a.Pattern)
	if err != nil {
		return false, fmt.Sprintf("the pattern /%s/ is not valid: %v", a.Pattern, err)
	}
	answer := ans.Text
	if loc := re.FindStringIndex(answer); loc != nil {
		return true, fmt.Sprintf("/%s/ matched %q at character %d", a.Pattern, text.Clip(answer[loc[0]:loc[1]], 80), utf8.RuneCountInString(answer[:loc[0]])+1)
	}
	return false, fmt.Sprintf("/%s/ matched nothing", a.Pattern)
}

func checkJSONValid(_ config.Assertion, ans Answer) (bool, string) {
	var v any
	if err := json.Unmarshal([]byte(strings.TrimSpace(ans.Text)), &v); err != nil {
		return false, "not valid JSON: " + jsonError(ans.Text, err)
	}
	return true, "valid JSON"
}

func checkJSONSchema(a config.Assertion, ans Answer) (bool, string) {
	var v any
	if err := json.Unmarshal([]byte(strings.TrimSpace(ans.Text)), &v); err != nil {
		return false, "not valid JSON, so not checked against the schema: " + jsonError(ans.Text, err)
	}
	rs, err := config.ResolveSchema(a.Schema)
	if err != nil {
		return false, err.Error()
	}
	if err := rs.Validate(v); err != nil {
		return false, "does not fit the schema: " + err.Error()
	}
	return true, "fits the schema"
}

func checkLength(a config.Assertion, ans Answer) (bool, string) {
	n, unit := utf8.RuneCountInString(ans.Text), "characters"
	if a.Words {
		n, unit = len(strings.Fields(ans.Text)), "words"
	}
	limit := int(a.Limit)
	if a.Kind == config.AssertMaxLength {
		return n <= limit, fmt.Sprintf("%d %s, at most %d allowed", n, unit, limit)
	}
	return n >= limit, fmt.Sprintf("%d %s, at least %d wanted", n, unit, limit)
}

// Judgements are an answer's verdicts under the assertions, one judgement
// each, as a result stores them.
func Judgements(list []config.Assertion, ans Answer) []store.Judgement {
	out := make([]store.Judgement, 0, len(list))
	for _, a := range list {
		ok, why := Check(a, ans)
		v := 0.0
		if ok {
			v = 1
		}
		out = append(out, store.Judgement{Evaluator: a.Kind, Detail: why, Attempts: 1,
			Scores: []store.Score{{Metric: a.Name, Value: v, Reasoning: why}}})
	}
	return out
}

func index(text, sub string, caseSensitive bool) int {
	if caseSensitive {
		return strings.Index(text, sub)
	}
	return strings.Index(strings.ToLower(text), strings.ToLower(sub))
}

func caseNote(caseSensitive bool) string {
	if caseSensitive {
		return " (case as written)"
	}
	return ""
}

// around is what surrounds text[i:i+n], for saying where something was found.
func around(text string, i, n int) string {
	lo, hi := max(0, i-30), min(len(text), i+n+30)
	for lo > 0 && !utf8.RuneStart(text[lo]) {
		lo--
	}
	for hi < len(text) && !utf8.RuneStart(text[hi]) {
		hi++
	}
	return strings.Join(strings.Fields(text[lo:hi]), " ")
}

// jsonError says where JSON broke, with the line and column when known.
func jsonError(text string, err error) string {
	if se, ok := errors.AsType[*json.SyntaxError](err); ok {
		off := int(min(se.Offset, int64(len(text))))
		line := strings.Count(text[:off], "\n") + 1
		col := off - strings.LastIndex(text[:off], "\n")
		return fmt.Sprintf("%v (line %d, column %d)", err, line, col)
	}
	return err.Error()
}
