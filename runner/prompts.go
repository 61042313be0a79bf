package runner

import (
	"fmt"
	"strings"

	"assay"
	"assay/config"
	"assay/store"
)

// The built-in prompt templates. {question} is the sample's input; for mcq,
// {choices} is the lettered list. A run's config may override each.
const (
	DefaultMCQPrompt  = "{question}\n\n{choices}\n\nAnswer with the letter of the correct option (A, B, C or D). End with a line of the form \"Answer: X\"."
	DefaultMathPrompt = "{question}\n\nSolve the problem step by step. End your answer with a final line of the form \"#### N\", where N is the final number."
	DefaultCodePrompt = "Complete the following Python function. Reply with the whole function in one ```python code block.\n\n```python\n{question}```"
)

// PromptTemplate returns the template a run uses for a kind.
func PromptTemplate(p config.Prompts, kind assay.Kind) string {
	switch kind {
	case assay.KindMCQ:
		return firstNonEmpty(p.MCQ, DefaultMCQPrompt)
	case assay.KindMath:
		return firstNonEmpty(p.Math, DefaultMathPrompt)
	case assay.KindCode:
		return firstNonEmpty(p.Code, DefaultCodePrompt)
	}
	return "{question}"
}

// Prompt builds the user message for a sample: the kind's template with
// {question} and {choices} filled in, in one pass (a strings.Replacer
// built for each sample was a third of an estimate's time).
func Prompt(p config.Prompts, kind assay.Kind, s *store.Sample) string {
	tmpl := PromptTemplate(p, kind)
	var b strings.Builder
	b.Grow(len(tmpl) + len(s.Input))
	for {
		i := strings.IndexByte(tmpl, '{')
		if i < 0 {
			b.WriteString(tmpl)
			return b.String()
		}
		b.WriteString(tmpl[:i])
		tmpl = tmpl[i:]
		switch {
		case strings.HasPrefix(tmpl, "{question}"):
			b.WriteString(s.Input)
			tmpl = tmpl[len("{question}"):]
		case strings.HasPrefix(tmpl, "{choices}"):
			for i, c := range s.Choices {
				if i > 0 {
					b.WriteByte('\n')
				}
				b.WriteString("(" + string(rune('A'+i)) + ") ")
				b.WriteString(c)
			}
			tmpl = tmpl[len("{choices}"):]
		default:
			b.WriteByte('{')
			tmpl = tmpl[1:]
		}
	}
}

// judgeReference is the golden answer as a judge should see it.
func judgeReference(kind assay.Kind, s *store.Sample) string {
	if kind == assay.KindMCQ && len(s.Reference) == 1 {
		if i := int(s.Reference[0] - 'A'); i >= 0 && i < len(s.Choices) {
			return fmt.Sprintf("(%s) %s", s.Reference, s.Choices[i])
		}
	}
	return s.Reference
}

func firstNonEmpty(a, b string) string {
	if strings.TrimSpace(a) != "" {
		return a
	}
	return b
}
