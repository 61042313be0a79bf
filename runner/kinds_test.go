package runner_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"assay/runner"
	"assay/runner/llm/llmtest"
	"assay/store"
)

// sharedRows reads a JSONL file of ../shared/datasets.
func sharedRows(t *testing.T, name string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile("../../shared/datasets/" + name)
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
		file, key, evaluator string
		answer, wrong        func(map[string]any) string
	}{
		{"mmlu_sample.jsonl", "question", "exact_match",
			func(r map[string]any) string { return "Let me think. The answer is (" + r["answer"].(string) + ")." },
			func(r map[string]any) string { return "A good answer is " + otherLetter(r["answer"].(string)) + "." }},
		{"gsm8k_sample.jsonl", "question", "numeric_match",
			func(r map[string]any) string { return r["answer"].(string) },
			func(r map[string]any) string { return "I think it is 123456789." }},
		{"humaneval_sample.jsonl", "prompt", "code_execution",
			func(r map[string]any) string {
				return "```python\n" + r["prompt"].(string) + r["canonical_solution"].(string) + "```"
			},
			func(r map[string]any) string { return "```python\n" + r["prompt"].(string) + "    pass\n```" }},
	}
	for _, tc := range cases {
		t.Run(tc.evaluator, func(t *testing.T) {
			rows := sharedRows(t, tc.file)
			f := newFixture(t, answering(rows, tc.key, tc.answer, tc.wrong))
			path, _ := filepath.Abs("../../shared/datasets/" + tc.file)
			cfg := f.config(path, "")
			cfg.Execution.NumRepetitions = 1
			run := f.launch(cfg)
			status, err := f.m.Execute(context.Background(), run.ID)
			if err != nil || status != store.RunCompleted {
				t.Fatalf("status %s, err %v", status, err)
			}
			s, _ := runner.Summarize(context.Background(), f.db, run.ID)
			want := float64((len(rows)+1)/2) / float64(len(rows))
			for _, c := range s.Conditions {
				if len(c.Metrics) != 1 || c.Metrics[0].Evaluator != tc.evaluator || c.Metrics[0].Mean != want {
					t.Fatalf("%s: metrics %+v, want %s pass rate %.2f", c.Name, c.Metrics, tc.evaluator, want)
				}
			}
			results, _ := f.db.Results(context.Background(), run.ID)
			if d := results[0].Judgements[0]; d.Raw == "" {
				t.Errorf("what the evaluator extracted should be kept: %+v", d)
			}
		})
	}
}

func otherLetter(l string) string {
	if l == "A" {
		return "B"
	}
	return "A"
}
