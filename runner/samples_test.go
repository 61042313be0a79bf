package runner_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"assay/runner/llm/llmtest"
	"assay/store"
)

// A run of more samples than it reads at a time answers each task with
// its own sample, every task once: the agent echoes the sum it was asked.
func TestARunOfManySamplesAnswersEachWithItsOwn(t *testing.T) {
	f := newFixture(t, func(req *llmtest.ChatRequest) llmtest.Reply {
		var a, b int
		last := req.Messages[len(req.Messages)-1].Content
		if _, err := fmt.Sscanf(last, "What is %d + %d?", &a, &b); err != nil {
			return llmtest.Reply{Content: "I cannot read " + last}
		}
		return llmtest.Reply{Content: fmt.Sprintf("The answer is %d.", a+b)}
	})
	const samples = 1300 // three of the run's reads
	cfg := f.config(f.qaDataset(samples), "evaluators: [{contains: \"The answer\"}]\n")
	cfg.Execution.NumRepetitions, cfg.Execution.MaxConcurrent = 2, 16
	run := f.launch(cfg)
	status, err := f.m.Execute(context.Background(), run.ID)
	if err != nil || status != store.RunCompleted {
		t.Fatalf("%s %v", status, err)
	}
	list, err := f.db.Samples(context.Background(), run.DatasetID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int64]string{}
	for _, s := range list {
		want[s.ID] = "The answer is " + s.Reference + "."
	}
	results, err := f.db.Results(context.Background(), run.ID)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[store.TaskKey]bool{}
	for _, r := range results {
		k := store.TaskKey{SampleRow: r.SampleRow, Condition: r.Condition, Repetition: r.Repetition}
		if seen[k] {
			t.Errorf("%v answered twice", k)
		}
		seen[k] = true
		if r.Response != want[r.SampleRow] {
			t.Fatalf("sample %d under %s: %q, want %q", r.SampleRow, r.Condition, r.Response, want[r.SampleRow])
		}
	}
	if len(seen) != samples*2*2 || !strings.HasPrefix(want[list[samples-1].ID], "The answer is 2600") {
		t.Errorf("%d tasks answered, want %d", len(seen), samples*2*2)
	}
}
