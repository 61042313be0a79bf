package runner

import (
	"fmt"
	"strings"
	"testing"

	"assay"
	"assay/config"
	"assay/store"
)

// A prompt is its template with the question and the lettered choices in
// place of {question} and {choices}, each place filled once, and nothing
// else of the template or of the sample's text read as a place.
func TestPromptFillsTheTemplate(t *testing.T) {
	s := &store.Sample{Input: "Which {choices} is {question}?", Choices: []string{"red", "{question}", "blue"}}
	for _, c := range []struct{ tmpl, want string }{
		{"{question}", "Which {choices} is {question}?"},
		{"Q: {question}\n{choices}\nAnswer:", "Q: Which {choices} is {question}?\n(A) red\n(B) {question}\n(C) blue\nAnswer:"},
		{"{choices}{question}{", "(A) red\n(B) {question}\n(C) blueWhich {choices} is {question}?{"},
		{"{{question}} {question {choice} }", "{Which {choices} is {question}?} {question {choice} }"},
		{"no places", "no places"},
	} {
		if got := Prompt(config.Prompts{MCQ: c.tmpl}, assay.KindMCQ, s); got != c.want {
			t.Errorf("%q: %q, want %q", c.tmpl, got, c.want)
		}
		// What a replacer of the two places makes of it.
		var choices []string
		for i, ch := range s.Choices {
			choices = append(choices, fmt.Sprintf("(%c) %s", 'A'+i, ch))
		}
		if r := strings.NewReplacer("{question}", s.Input, "{choices}", strings.Join(choices, "\n")).Replace(c.tmpl); r != c.want {
			t.Errorf("%q: a replacer makes %q, the test wants %q", c.tmpl, r, c.want)
		}
	}
	if got := Prompt(config.Prompts{}, assay.KindQA, &store.Sample{Input: "What is 2 + 2?"}); got != "What is 2 + 2?" {
		t.Errorf("a question's prompt: %q", got)
	}
}
