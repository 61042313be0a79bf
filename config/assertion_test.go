package config

import (
	"strings"
	"testing"
)

const assertionsFile = `dataset: {path: q.jsonl}
agent: {type: openai, model: m}
judge: {model: j}
conditions: {baseline: {}}
evaluators:
  - rubric
  - {contains: "runbook"}
  - not_contains: {text: "rm -rf", case_sensitive: true}
  - {regex: "\\d+"}
  - {max_length: {words: 120}}
  - {min_length: 10}
  - json_valid: true
  - json_schema: {type: object, required: [answer]}
  - {latency_ms_below: 2000}
  - {cost_below: 0.01}
`

func TestAssertionsInEvaluators(t *testing.T) {
	c, err := Parse([]byte(assertionsFile), "run.yaml", t.TempDir(), noEnv(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Evaluators) != 1 || c.Evaluators[0] != EvalRubric {
		t.Errorf("evaluators %v, want rubric alone", c.Evaluators)
	}
	var names []string
	for _, a := range c.Assertions {
		names = append(names, a.Name)
	}
	want := `contains "runbook"|not_contains "rm -rf"|regex /\d+/|max_length 120 words|min_length 10 chars|json_valid|json_schema|latency_ms_below 2000|cost_below 0.01`
	if got := strings.Join(names, "|"); got != want {
		t.Errorf("assertions\n%s\nwant\n%s", got, want)
	}
	if !c.Assertions[1].CaseSensitive || c.Assertions[3].Limit != 120 || !c.Assertions[3].Words || string(c.Assertions[6].Schema) != `{"required":["answer"],"type":"object"}` {
		t.Errorf("assertion settings: %+v", c.Assertions)
	}
	// A run keeps them in its snapshot.
	raw, _ := c.Redacted()
	back, err := Stored(raw)
	if err != nil || len(back.Assertions) != len(c.Assertions) || back.Assertions[0].Text != "runbook" {
		t.Errorf("stored: %v, %+v", err, back.Assertions)
	}
	// json_valid needs no argument: written bare, it is the same assertion.
	bare, err := Parse([]byte(strings.Replace(assertionsFile, "- json_valid: true", "- json_valid", 1)), "run.yaml", t.TempDir(), noEnv(t))
	if err != nil || len(bare.Assertions) != len(c.Assertions) || bare.Assertions[5].Kind != AssertJSONValid {
		t.Errorf("json_valid written bare: %v, %+v", err, bare.Assertions)
	}
	// Assertions alone: no default evaluator is added to them.
	alone, err := Parse([]byte(strings.Replace(assertionsFile, "  - rubric\n", "", 1)), "run.yaml", t.TempDir(), noEnv(t))
	if err != nil || len(alone.EvaluatorsFor("qa")) != 0 || len(alone.Assertions) != 9 {
		t.Errorf("assertions alone: %v, evaluators %v", err, alone.EvaluatorsFor("qa"))
	}
}

func TestBadAssertionsSayWhere(t *testing.T) {
	for _, tc := range []struct{ item, want string }{
		{`{containz: "x"}`, `run.yaml:7: evaluators[1].containz: unknown assertion (did you mean contains?)`},
		{`{regex: "(unclosed"}`, `run.yaml:7: evaluators[1].regex: not a regular expression`},
		{`{max_length: {lines: 3}}`, `evaluators[1].max_length: want a number of characters, or {chars: N} or {words: N}`},
		{`{json_schema: {type: 12}}`, `evaluators[1].json_schema: not a`},
		{`{contains: ""}`, `evaluators[1].contains: the text to look for is empty`},
		{`{cost_below: -1}`, `evaluators[1].cost_below: want a positive number`},
		{`{contains: x, regex: y}`, `evaluators[1]: want an evaluator's name`},
	} {
		file := "dataset: {path: q.jsonl}\nagent: {type: openai, model: m}\njudge: {model: j}\nconditions: {baseline: {}}\nevaluators:\n  - rubric\n  - " + tc.item + "\n"
		_, err := Parse([]byte(file), "run.yaml", t.TempDir(), noEnv(t))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.item, err, tc.want)
		}
	}
}

func TestBadRubricsSayWhere(t *testing.T) {
	base := "dataset: {path: q.jsonl}\nagent: {type: openai, model: m}\njudge: {model: j}\nconditions: {baseline: {}}\n"
	for _, tc := range []struct{ file, want string }{
		{"evaluators: [{judge: nope}]\n", `evaluators[0].judge: no rubric "nope" under rubrics`},
		{"rubrics: {support: {metrics: [{name: ok, description: d, scale: \"1-10\"}]}}\nevaluators: [{judge: support}]\n", `rubrics.support.metrics[0].scale: want "1-5", "0-1" or "pass"`},
		{"rubrics: {support: {metrics: [{name: ok, description: d, scale: \"1-5\", levels: {\"7\": x}}]}}\nevaluators: [{judge: support}]\n", `rubrics.support.metrics[0].levels.7: not a level of the 1–5 scale`},
		{"rubrics: {support: {metrics: [{name: Ok, description: d, scale: pass}]}}\nevaluators: [{judge: support}]\n", `rubrics.support.metrics[0].name: want lower-case letters`},
		{"rubrics: {support: {metrics: [{name: ok, scale: pass}]}}\nevaluators: [{judge: support}]\n", `rubrics.support.metrics[0].description: required`},
		{"rubrics: {rubric: {metrics: [{name: ok, description: d, scale: pass}]}}\nevaluators: [{judge: rubric}]\n", `rubrics.rubric: the name of a built-in evaluator`},
	} {
		_, err := Parse([]byte(base+tc.file), "run.yaml", t.TempDir(), noEnv(t))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.file, err, tc.want)
		}
	}
}

// Every assertion kind has a reader of its argument.
func TestEveryAssertionKindReadsItsArgument(t *testing.T) {
	for _, k := range AssertionKinds {
		if assertionArgs[k] == nil {
			t.Errorf("the assertion %s has no reader of its argument", k)
		}
	}
}
