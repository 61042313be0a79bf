package runner_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"assay/report"
	"assay/runner/llm/llmtest"
	"assay/store"
)

// Assertions in a run: each a metric of its own under its kind, scored on
// every answer with what it found; a run of assertions alone calls no judge.
func TestAssertionsScoreEveryAnswer(t *testing.T) {
	var judged atomic.Int64
	judge := llmtest.Judge(nil)
	f := newFixture(t, llmtest.JudgeAndAgent(func(req *llmtest.ChatRequest) llmtest.Reply { judged.Add(1); return judge(req) },
		llmtest.Text(`{"answer": 4, "source": "the runbook"}`)))
	cfg := f.config(f.qaDataset(3), `evaluators:
  - {contains: "Runbook"}
  - {not_contains: "rm -rf"}
  - {regex: "\"answer\": \\d+"}
  - {max_length: {words: 3}}
  - json_schema: {type: object, required: [answer, source]}
`)
	cfg.Execution.NumRepetitions = 2
	run := f.launch(cfg)
	status, err := f.m.Execute(context.Background(), run.ID)
	if err != nil || status != store.RunCompleted {
		t.Fatalf("%s %v", status, err)
	}
	if n := judged.Load(); n != 0 {
		t.Errorf("a run of assertions alone called the judge %d times", n)
	}
	s, _ := report.Summarize(context.Background(), f.db, run.ID)
	got := map[string]float64{}
	for _, m := range s.Conditions[0].Metrics {
		got[m.Evaluator+" · "+m.Name] = m.Mean
		if m.N != 6 {
			t.Errorf("%s: %d scores, want 6", m.Name, m.N)
		}
	}
	want := map[string]float64{`contains · contains "Runbook"`: 1, `not_contains · not_contains "rm -rf"`: 1,
		`regex · regex /"answer": \d+/`: 1, `max_length · max_length 3 words`: 0, `json_schema · json_schema`: 1}
	for k, w := range want {
		if v, ok := got[k]; !ok || v != w {
			t.Errorf("%s = %v (present %v), want %v; all: %v", k, v, ok, w, got)
		}
	}
	results, _ := f.db.Results(context.Background(), run.ID)
	for _, j := range results[0].Judgements {
		if j.Evaluator == "max_length" && !strings.Contains(j.Detail, "5 words, at most 3 allowed") {
			t.Errorf("max_length says %q", j.Detail)
		}
	}
}
