package runner_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"assay/runner/llm/llmtest"
	"assay/store"
)

// A run stopped in the middle of a task's judge repetitions goes on from
// them: neither the agent nor a judge is asked again for what it answered,
// and the result holds every judge call once.
func TestResumeInTheMiddleOfJudgeRepetitionsRedoesNoCall(t *testing.T) {
	var agentCalls, judgeCalls atomic.Int64
	stop := make(chan struct{})
	var once sync.Once
	judgeH := func(req *llmtest.ChatRequest) llmtest.Reply {
		n := judgeCalls.Add(1)
		if n == 5 { // the second task's second judge call: the process dies here
			once.Do(func() { close(stop) })
			return llmtest.Reply{Hang: true}
		}
		answer, _ := llmtest.JudgeAnswer(req, map[string]any{"factual_adherence": 4, "completeness": 3,
			"helpfulness_and_clarity": 5, "unverified_claims": []string{}})
		return llmtest.Reply{Content: answer}
	}
	agentH := func(req *llmtest.ChatRequest) llmtest.Reply {
		agentCalls.Add(1)
		return llmtest.Reply{Content: "An answer."}
	}
	f := newFixture(t, llmtest.JudgeAndAgent(judgeH, agentH))
	cfg := f.config(f.qaDataset(2), "judge_repetitions: 3\n")
	cfg.Execution.NumRepetitions, cfg.Execution.MaxConcurrent = 1, 1
	run := f.launch(cfg)

	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-stop; cancel() }()
	if status, err := f.m.Execute(ctx, run.ID); err != nil || status != store.RunRunning {
		t.Fatalf("the stopped run: %s %v", status, err)
	}
	results, _ := f.db.Results(context.Background(), run.ID)
	if len(results) != 1 || agentCalls.Load() != 2 || judgeCalls.Load() != 5 {
		t.Fatalf("before the stop: %d results, %d agent calls, %d judge calls", len(results), agentCalls.Load(), judgeCalls.Load())
	}

	if status, err := f.m.Execute(context.Background(), run.ID); err != nil || status != store.RunCompleted {
		t.Fatalf("the resumed run: %s %v", status, err)
	}
	// 4 tasks (2 samples × 2 conditions) × 3 judge calls, plus the one cut
	// short; 4 agent calls. Nothing finished was asked twice.
	if agentCalls.Load() != 4 || judgeCalls.Load() != 13 {
		t.Errorf("after resuming: %d agent calls (want 4), %d judge calls (want 13)", agentCalls.Load(), judgeCalls.Load())
	}
	results, _ = f.db.Results(context.Background(), run.ID)
	for _, r := range results {
		reps := map[int]bool{}
		for _, j := range r.Judgements {
			reps[j.JudgeRepetition] = true
		}
		if len(r.Judgements) != 3 || len(reps) != 3 || r.Response != "An answer." {
			t.Errorf("%s/%d: %d judgements over %d repetitions", r.Condition, r.SampleRow, len(r.Judgements), len(reps))
		}
	}
	if left, _ := f.db.PendingWork(context.Background(), run.ID); len(left) != 0 {
		t.Errorf("pending work left after the run: %v", left)
	}
}
