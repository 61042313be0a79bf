package runner_test

import (
	"context"
	"testing"
	"time"

	"assay/report"
	"assay/runner/llm/llmtest"
	"assay/store"
)

// With many tasks in flight, the budget holds: the run stops with what it
// spent past the budget under one task's cost, not concurrency × a task.
func TestBudgetHoldsWithTasksInFlight(t *testing.T) {
	// Every task costs the same: an agent call of 1,000 + 200 tokens and a judge call.
	agent := func(*llmtest.ChatRequest) llmtest.Reply {
		return llmtest.Reply{Content: "4", PromptTokens: 1000, CompletionTokens: 200}
	}
	f := newFixture(t, llmtest.JudgeAndAgent(llmtest.Judge(nil), agent), llmtest.WithLatency(5*time.Millisecond))
	cfg := f.config(f.qaDataset(40), `budget_usd: 0.05
prices: {agent-model: {input_per_mtok: 5, output_per_mtok: 15}, judge-model: {input_per_mtok: 1, output_per_mtok: 1}}`)
	cfg.Execution.MaxConcurrent = 8
	run := f.launch(cfg)
	status, err := f.m.Execute(context.Background(), run.ID)
	if err != nil || status != store.RunBudgetExhausted {
		t.Fatalf("status %s, err %v", status, err)
	}
	s, _ := report.Summarize(context.Background(), f.db, run.ID)
	perTask := s.CostUSD / float64(s.Results)
	t.Logf("spent $%.4f of a $0.05 budget in %d tasks of $%.4f each", s.CostUSD, s.Results, perTask)
	if s.CostUSD < 0.05 || s.CostUSD-0.05 > perTask {
		t.Errorf("spent $%.4f of a $0.05 budget in %d tasks of $%.4f each: over by %.1f tasks (8 at once)",
			s.CostUSD, s.Results, perTask, (s.CostUSD-0.05)/perTask)
	}
}
