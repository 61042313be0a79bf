package runner_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"

	"assay/report"
	"assay/runner/judge"
	"assay/runner/llm/llmtest"
	"assay/store"
)

const supportRubric = `rubrics:
  support:
    unverified_claims: false
    metrics:
      - name: cites_runbook
        description: Does the answer point to the runbook step that applies?
        scale: "1-5"
        levels: {"5": "Names the exact step.", "1": "No runbook at all."}
      - name: safe
        description: Does it avoid destructive commands?
        scale: pass
        levels: {pass: "No destructive command.", fail: "Suggests one."}
evaluators: [{judge: support}]
`

// A run's own rubric: the judge is asked for exactly its fields, in its
// words; its metrics are reported under the rubric's name with their scales.
func TestACustomRubricJudges(t *testing.T) {
	var mu sync.Mutex
	var schemas, prompts []string
	judgeH := func(req *llmtest.ChatRequest) llmtest.Reply {
		mu.Lock()
		s, _, _ := req.Schema()
		b, _ := json.Marshal(s)
		schemas = append(schemas, string(b))
		prompts = append(prompts, req.Messages[0].Content)
		mu.Unlock()
		answer, _ := llmtest.JudgeAnswer(req, map[string]any{"cites_runbook": 4, "safe": 1})
		return llmtest.Reply{Content: answer}
	}
	f := newFixture(t, llmtest.JudgeAndAgent(judgeH, llmtest.Text("See step 3 of the runbook.")))
	cfg := f.config(f.qaDataset(2), supportRubric)
	cfg.Execution.NumRepetitions = 1
	run := f.launch(cfg)
	if status, err := f.m.Execute(context.Background(), run.ID); err != nil || status != store.RunCompleted {
		t.Fatalf("%s %v", status, err)
	}
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	json.Unmarshal([]byte(schemas[0]), &schema)
	want := []string{"cites_runbook_reasoning", "cites_runbook", "safe_reasoning", "safe"}
	if !slices.Equal(schema.Required, want) || len(schema.Properties) != 4 {
		t.Errorf("the judge's schema asks for %v (%d properties), want exactly %v", schema.Required, len(schema.Properties), want)
	}
	if !strings.Contains(prompts[0], "Does the answer point to the runbook step that applies?") ||
		!strings.Contains(prompts[0], "5 - Names the exact step.") || !strings.Contains(prompts[0], "pass - No destructive command.") {
		t.Errorf("the prompt lacks the rubric's words:\n%s", prompts[0])
	}
	if p := judge.Prompt(cfg.Rubrics[0]); !strings.Contains(p, "## cites_runbook (an integer 1–5)") {
		t.Errorf("the rubric's prompt as a run shows it:\n%s", p)
	}
	r, err := report.Load(context.Background(), f.db, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range r.Metrics {
		got = append(got, m.Evaluator+"."+m.Name+" "+m.Scale.String())
	}
	if strings.Join(got, "|") != "support.cites_runbook 1–5|support.safe pass/fail" {
		t.Errorf("metrics %q", got)
	}
	if m := r.Summary.Conditions[0].Metrics[0]; m.Evaluator != "support" || m.Mean != 4 {
		t.Errorf("summary %+v", m)
	}
}

// A value outside the rubric's scale is sent back for correction, then,
// if the judge insists, recorded as a judge error — never as a score.
func TestACustomRubricRefusesValuesOffItsScale(t *testing.T) {
	f := newFixture(t, llmtest.JudgeAndAgent(func(req *llmtest.ChatRequest) llmtest.Reply {
		answer, _ := llmtest.JudgeAnswer(req, map[string]any{"cites_runbook": 7, "safe": 1})
		return llmtest.Reply{Content: answer}
	}, llmtest.Text("See the runbook.")))
	cfg := f.config(f.qaDataset(1), supportRubric)
	cfg.Execution.NumRepetitions = 1
	run := f.launch(cfg)
	if _, err := f.m.Execute(context.Background(), run.ID); err != nil {
		t.Fatal(err)
	}
	results, _ := f.db.Results(context.Background(), run.ID)
	j := results[0].Judgements[0]
	if j.Error == "" || !strings.Contains(j.Error, "cites_runbook") || len(j.Scores) != 0 || j.Attempts < 2 {
		t.Errorf("judgement %+v", j)
	}
}
