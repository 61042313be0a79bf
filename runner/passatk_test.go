package runner_test

import (
	"context"
	"math"
	"strings"
	"sync"
	"testing"

	files "assay/internal/fixture"
	"assay/report"
	"assay/runner/llm/llmtest"
	"assay/store"
)

// pass@k on a HumanEval-shaped run: problem i gets its right solution on
// exactly c[i] of its three attempts, the sandbox runs every answer, and the
// summary's pass@1, pass@2 and pass@3 are the estimator computed by hand.
func TestPassAtKOfAHumanEvalRun(t *testing.T) {
	rows := jsonlRows(t, files.Path("humaneval.jsonl"))
	right := []int{0, 1, 2, 3, 0, 1}
	var mu sync.Mutex
	given := map[int]int{}
	agent := func(req *llmtest.ChatRequest) llmtest.Reply {
		for i, row := range rows {
			if strings.Contains(req.LastUser(), row["prompt"].(string)) {
				mu.Lock()
				given[i]++
				ok := given[i] <= right[i]
				mu.Unlock()
				body := "    pass\n"
				if ok {
					body = row["canonical_solution"].(string)
				}
				return llmtest.Reply{Content: "```python\n" + row["prompt"].(string) + body + "```"}
			}
		}
		return llmtest.Reply{Content: "?"}
	}
	f := newFixture(t, agent)
	cfg := f.config(files.Path("humaneval.jsonl"), "")
	cfg.Execution.NumRepetitions = 3
	cfg.ConditionSpecs = cfg.ConditionSpecs[:1]
	run := f.launch(cfg)
	if status, err := f.m.Execute(context.Background(), run.ID); err != nil || status != store.RunCompleted {
		t.Fatalf("%s %v", status, err)
	}
	s, _ := report.Summarize(context.Background(), f.db, run.ID)
	got := s.Conditions[0].PassAtK
	// pass@1: mean of c/3; pass@2: 1 − C(3−c, 2)/C(3, 2) = 0, 2/3, 1, 1 for c = 0…3; pass@3: c > 0.
	want := map[string]float64{"1": (0 + 1.0/3 + 2.0/3 + 1 + 0 + 1.0/3) / 6, "2": (0 + 2.0/3 + 1 + 1 + 0 + 2.0/3) / 6, "3": 4.0 / 6}
	for k, w := range want {
		if math.Abs(got[k]-w) > 1e-9 {
			t.Errorf("pass@%s = %v, want %v (all: %v)", k, got[k], w, got)
		}
	}
}
