package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// A user writes a rubric on the Rubrics page — a mistake first, told on
// which line — then finds it among the run form's evaluators.
func TestBrowserRubricsPage(t *testing.T) {
	t.Parallel()
	dbPath := filepath.Join(t.TempDir(), "assay.db")
	seedDatasetAndCondition(t, dbPath)
	base := startServer(t, "--db", dbPath)
	ctx := newBrowser(t)

	err := chromedp.Do(ctx,
		chromedp.Navigate(base+"/rubrics"),
		chromedp.WaitVisible(chromedp.CSS("#new-rubric")),
		chromedp.Evaluate[chromedp.Void](`window.leaving = true; document.getElementById("new-rubric").click(); true`),
	)
	if err != nil {
		t.Fatal(err)
	}
	waitNewPage(t, ctx, "/rubrics/new")
	const typo = `document.getElementById("name").value = "runbook";
		const src = document.getElementById("source");
		src.value = src.value.replace("scale: 1-5", "scale: 1-10");
		window.leaving = true; document.querySelector("#rubric-form button[type=submit]").click(); true`
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](typo)); err != nil {
		t.Fatal(err)
	}
	waitNewPage(t, ctx, "/rubrics")
	if got := textOf(t, ctx, "#form-error"); !strings.Contains(got, `rubric:10: metrics[1].scale: want "1-5", "0-1" or "pass" (got "1-10")`) {
		t.Fatalf("the mistake: %q", got)
	}
	screenshot(t, ctx, "rubric-error")
	const fix = `const src2 = document.getElementById("source");
		src2.value = src2.value.replace("scale: 1-10", "scale: 1-5");
		window.leaving = true; document.querySelector("#rubric-form button[type=submit]").click(); true`
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](fix)); err != nil {
		t.Fatal(err)
	}
	waitNewPage(t, ctx, "/rubrics/runbook")
	if got := textOf(t, ctx, "#rubric-prompt pre"); !strings.Contains(got, "## safe (an integer 1–5)") {
		t.Errorf("the judge's prompt: %.300q", got)
	}
	screenshot(t, ctx, "rubric")
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/runs/new"), chromedp.WaitVisible(chromedp.CSS(`input[value="judge:runbook"]`)),
		chromedp.Click(chromedp.CSS(`#judge-prompt-runbook summary`)), chromedp.WaitVisible(chromedp.CSS(`#judge-prompt-runbook pre`))); err != nil {
		t.Fatalf("the run form's rubric: %v", err)
	}
	if got := textOf(t, ctx, "#evaluators"); !strings.Contains(got, "your rubric: cites_runbook (pass/fail), safe (1–5)") {
		t.Errorf("the evaluators: %q", got)
	}
	screenshot(t, ctx, "run-form-rubric")
	if v := cspViolations(ctx); len(v) > 0 {
		t.Errorf("CSP violations: %v", v)
	}
}
