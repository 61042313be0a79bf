package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"assay/runner/llm/llmtest"
)

// launchFromPage posts the new run form from the page open in the browser,
// with the form's own token, and returns where the server sent it.
const launchFromPage = `(async () => {
	const page = await (await fetch("/runs/new")).text();
	const token = page.match(/name="_csrf" value="([^"]+)"/)[1];
	const r = await fetch("/runs", {method: "POST", body: new URLSearchParams({...%s, _csrf: token})});
	return new URL(r.url).pathname;
})()`

// The report under a running run's progress keeps up with it: after a
// result, it shows the result with the progress's next refresh, not ten
// seconds later; at the end it shows every result and stops refreshing.
func TestBrowserLiveReportKeepsUpWithTheProgress(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	fake := llmtest.New(llmtest.JudgeAndAgent(llmtest.Judge(nil), func(*llmtest.ChatRequest) llmtest.Reply {
		<-release
		return llmtest.Reply{Content: "4"}
	}))
	defer fake.Close()
	defer close(release)
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
	path, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(launchFromPage, form), chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	if path != "/runs/1" {
		t.Fatalf("the launch ended at %s", path)
	}
	// Count the progress refreshes the page makes.
	const count = `window.polls = 0; document.body.addEventListener("htmx:afterRequest", e => {
		if ((e.detail.pathInfo.requestPath || "").includes("/progress")) window.polls++; }); true`
	if err := chromedp.Do(ctx, chromedp.Navigate(base+path), chromedp.WaitVisible(chromedp.CSS("#run-live")),
		chromedp.Evaluate[chromedp.Void](count)); err != nil {
		t.Fatal(err)
	}

	release <- struct{}{}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelector("#run-done").textContent.startsWith("1 ")`,
		chromedp.WithPollingInterval(20*time.Millisecond))); err != nil {
		t.Fatalf("the progress never showed the first result: %v", err)
	}
	// The report must show it within the next few progress refreshes.
	shown := `document.querySelector("#report").textContent.replace(/\s+/g, " ").includes("1 of 2 tasks")`
	_, err = chromedp.Run(ctx, chromedp.Poll[bool](fmt.Sprintf(`(window.start ??= window.polls, %s || window.polls >= window.start + 3)`, shown),
		chromedp.WithPollingInterval(20*time.Millisecond)))
	seen, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](shown))
	if err != nil || !seen {
		polls, _ := chromedp.Run(ctx, chromedp.Evaluate[int]("window.polls"))
		t.Fatalf("after %d progress refreshes the report does not show the first result (%v): %q", polls, err,
			textOf(t, ctx, "#report .facts, #report"))
	}
	screenshot(t, ctx, "live-report")

	release <- struct{}{}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`!document.querySelector("#report").hasAttribute("hx-trigger")`,
		chromedp.WithPollingInterval(20*time.Millisecond))); err != nil {
		t.Fatalf("the report never stopped refreshing: %v", err)
	}
	if got := strings.Join(strings.Fields(textOf(t, ctx, "#report")), " "); !strings.Contains(got, "2 of 2 tasks") {
		t.Errorf("the finished report: %q", got[:min(len(got), 400)])
	}
	if got := textOf(t, ctx, "#run-live .badge"); !strings.Contains(got, "completed") {
		t.Errorf("the progress reads %q", got)
	}
}
