package runner_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	files "assay/internal/fixture"
	"assay/report"
	"assay/runner/llm/llmtest"
	"assay/store"
)

// jsonlRows reads a JSONL file.
func jsonlRows(t *testing.T, path string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rows []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var row map[string]any
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, row)
	}
	return rows
}

// answering returns an agent that finds the sample in the prompt and answers
// with answer(row), or with wrong(row) for every other sample.
func answering(rows []map[string]any, key string, answer, wrong func(map[string]any) string) llmtest.Handler {
	return func(req *llmtest.ChatRequest) llmtest.Reply {
		for i, row := range rows {
			if strings.Contains(req.LastUser(), row[key].(string)) {
				if i%2 == 0 {
					return llmtest.Reply{Content: answer(row)}
				}
				return llmtest.Reply{Content: wrong(row)}
			}
		}
		return llmtest.Reply{Content: "I do not know."}
	}
}

func TestEachKindScoresWithItsEvaluator(t *testing.T) {
	cases := []struct {
		file, shared, key, evaluator string
		answer, wrong                func(map[string]any) string
	}{
		{"mmlu.jsonl", "mmlu_sample.jsonl", "question", "exact_match",
			func(r map[string]any) string { return "Let me think. The answer is (" + r["answer"].(string) + ")." },
			func(r map[string]any) string { return "A good answer is " + otherLetter(r["answer"].(string)) + "." }},
		{"gsm8k.jsonl", "gsm8k_sample.jsonl", "question", "numeric_match",
			func(r map[string]any) string { return r["answer"].(string) },
			func(r map[string]any) string { return "I think it is 123456789." }},
		{"humaneval.jsonl", "humaneval_sample.jsonl", "prompt", "code_execution",
			func(r map[string]any) string {
				return "```python\n" + r["prompt"].(string) + r["canonical_solution"].(string) + "```"
			},
			func(r map[string]any) string { return "```python\n" + r["prompt"].(string) + "    pass\n```" }},
	}
	for _, tc := range cases {
		for _, set := range []string{"fixture", "conformance"} {
			t.Run(tc.evaluator+"/"+set, func(t *testing.T) {
				path := files.Path(tc.file)
				if set == "conformance" {
					path = files.Shared(t, tc.shared)
				}
				scoresEachKind(t, path, tc.key, tc.evaluator, tc.answer, tc.wrong)
			})
		}
	}
}

// scoresEachKind runs the dataset at path with an agent that answers every
// other sample right, and checks the evaluator's pass rate.
func scoresEachKind(t *testing.T, path, key, evaluator string, answer, wrong func(map[string]any) string) {
	t.Helper()
	rows := jsonlRows(t, path)
	f := newFixture(t, answering(rows, key, answer, wrong))
	cfg := f.config(path, "")
	cfg.Execution.NumRepetitions = 1
	run := f.launch(cfg)
	status, err := f.m.Execute(context.Background(), run.ID)
	if err != nil || status != store.RunCompleted {
		t.Fatalf("status %s, err %v", status, err)
	}
	s, _ := report.Summarize(context.Background(), f.db, run.ID)
	want := float64((len(rows)+1)/2) / float64(len(rows))
	for _, c := range s.Conditions {
		if len(c.Metrics) != 1 || c.Metrics[0].Evaluator != evaluator || c.Metrics[0].Mean != want {
			t.Fatalf("%s: metrics %+v, want %s pass rate %.2f", c.Name, c.Metrics, evaluator, want)
		}
	}
	results, _ := f.db.Results(context.Background(), run.ID)
	if d := results[0].Judgements[0]; d.Raw == "" {
		t.Errorf("what the evaluator extracted should be kept: %+v", d)
	}
}

func otherLetter(l string) string {
	if l == "A" {
		return "B"
	}
	return "A"
}
