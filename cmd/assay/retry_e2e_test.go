package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/chromedp/chromedp"

	"assay/runner/llm/llmtest"
)

// A finished run with failed tasks: the page offers to retry them, asks
// first, and once they succeed the run reads completed without errors.
func TestBrowserRetryFailedTasks(t *testing.T) {
	t.Parallel()
	var broken atomic.Bool
	broken.Store(true)
	fake := llmtest.New(llmtest.JudgeAndAgent(llmtest.Judge(nil), func(req *llmtest.ChatRequest) llmtest.Reply {
		if broken.Load() && strings.Contains(req.Messages[len(req.Messages)-1].Content, "3+3") {
			return llmtest.Reply{Status: 400, Content: "quota exceeded for this project"}
		}
		return llmtest.Reply{Content: "4"}
	}))
	defer fake.Close()
	dbPath := filepath.Join(t.TempDir(), "assay.db")
	seedDatasetAndCondition(t, dbPath)
	base := startServer(t, "--db", dbPath)
	ctx := newBrowser(t)

	form := fmt.Sprintf(`{dataset: "1", condition: "1", evaluator: "rubric", repetitions: "1", concurrency: "1",
		agent_base_url: %q, agent_model: "agent-model", judge_base_url: %[1]q, judge_model: "judge-model",
		judge_temperature: "0", judge_seed: "42", judge_sample_rate: "1", judge_repetitions: "1"}`, fake.URL)
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/runs")); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(launchFromPage, form), chromedp.EvalAwaitPromise)); err != nil {
		t.Fatal(err)
	}
	err := chromedp.Do(ctx, chromedp.Navigate(base+"/runs/1"), chromedp.WaitVisible(chromedp.CSS("#retry-errors")))
	if err != nil {
		t.Fatalf("no retry offered: %v", err)
	}
	if got := textOf(t, ctx, "#retry-errors"); got != "Retry 1 failed task" {
		t.Errorf("the button reads %q", got)
	}
	broken.Store(false)
	// The page asks before retrying: the reader accepts.
	err = chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`window.confirm = () => true`),
		chromedp.Click(chromedp.CSS("#retry-errors")),
		chromedp.WaitVisible(chromedp.CSS(".flash.ok")),
		chromedp.WaitNotPresent(chromedp.CSS("#retry-errors")),
		chromedp.WaitVisible(chromedp.CSS("#run-live .badge.st-completed")),
	)
	if err != nil {
		t.Fatalf("retry: %v", err)
	}
	if got := textOf(t, ctx, "#report-errors"); got != "0 errors" {
		t.Errorf("after the retry the report counts %q", got)
	}
}
