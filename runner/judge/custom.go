package judge

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"assay/config"
	"assay/runner/llm"
)

// Custom judges with a rubric of the run's own: its metrics, scales and
// levels make the instructions and the answer's schema, each metric with
// its reasoning before its score, as the built-in rubric does.
type Custom struct {
	client *llm.Client
	form   *form
}

// NewCustom is a judge of the rubric r on the judge model of client.
func NewCustom(client *llm.Client, r config.Rubric) *Custom {
	return &Custom{client: client, form: CustomForm(r)}
}

// Judge scores in.Response against in.Reference; metrics carry the
// rubric's names.
func (c *Custom) Judge(ctx context.Context, in Input) (*Judgement, error) {
	return judge(ctx, c.client, 0, c.form, in)
}

// CustomForm is the form of a rubric: what the judge is told and what it answers.
func CustomForm(r config.Rubric) *form {
	f := &form{name: "verdict", instructions: customInstructions(r)}
	for _, m := range r.Metrics {
		sc, _ := m.ScaleOf()
		f.fields = append(f.fields,
			field{name: m.Name + "_reasoning", kind: text, about: "why the response earns its " + m.Name + " score"},
			field{name: m.Name, kind: score, scale: sc, about: m.Name + ", " + scaleWords(sc) + " per the rubric"})
	}
	if r.UnverifiedClaims {
		f.fields = append(f.fields, field{name: "unverified_claims", kind: list,
			about: "each claim of the response that the golden answer neither states nor implies, one string per claim; an empty array if there are none"})
	}
	return f
}

// Prompt is the judge's system prompt for a rubric, as a run shows it.
func Prompt(r config.Rubric) string {
	return CustomForm(r).messages(Input{}, true)[0].Content
}

// PromptOf is what the judge of an evaluator is told, for a page to show:
// the built-in rubric's or arbiter's instructions, or a run's own rubric's.
func PromptOf(ev config.Evaluator, cfg *config.Config) (string, bool) {
	switch ev {
	case config.EvalRubric:
		return rubricForm.messages(Input{}, true)[0].Content, true
	case config.EvalArbiter:
		return arbiterForm.messages(Input{}, true)[0].Content, true
	}
	if name, ok := ev.Rubric(); ok {
		if r, found := cfg.RubricNamed(name); found {
			return Prompt(*r), true
		}
	}
	return "", false
}

func scaleWords(sc config.Scale) string {
	switch sc {
	case config.ScaleLikert:
		return "an integer 1–5"
	case config.ScalePass:
		return "1 (pass) or 0 (fail)"
	}
	return "a number from 0 to 1"
}

func customInstructions(r config.Rubric) string {
	var b strings.Builder
	b.WriteString(`You are an impartial expert evaluator. You compare an AI agent's response to a question with a golden answer written by a domain expert, and you score the response on the metrics below.

The golden answer is the ground truth. Judge only the agent response; do not answer the question yourself.

## Rules
- Score each metric by its own description and levels, and nothing else.
- Write each metric's reasoning before its score.`)
	if r.UnverifiedClaims {
		b.WriteString("\n- List every claim of the response that the golden answer does not support (neither states nor implies) in unverified_claims, one short string per claim.")
	}
	for _, m := range r.Metrics {
		sc, _ := m.ScaleOf()
		fmt.Fprintf(&b, "\n\n## %s (%s)\n%s", m.Name, scaleWords(sc), strings.TrimSpace(m.Description))
		levels := slices.Collect(maps.Keys(m.Levels))
		slices.SortFunc(levels, func(a, b string) int { // highest first, as the built-in rubric lists them
			x, errA := strconv.ParseFloat(a, 64)
			y, errB := strconv.ParseFloat(b, 64)
			if errA != nil || errB != nil {
				return strings.Compare(b, a)
			}
			switch {
			case x > y:
				return -1
			case x < y:
				return 1
			}
			return 0
		})
		for _, l := range levels {
			fmt.Fprintf(&b, "\n%s - %s", l, strings.TrimSpace(m.Levels[l]))
		}
	}
	return b.String()
}
