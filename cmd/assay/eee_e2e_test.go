package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"assay/internal/fixture"
)

// TestBrowserImportKEvalRun imports k-eval's EEE files on the Runs page: a
// partial instance file is refused with the file and the reason, then the
// whole pair becomes a finished, read-only run with its report and the
// judge's reasoning.
func TestBrowserImportKEvalRun(t *testing.T) {
	t.Parallel()
	base := startServer(t)
	ctx := newBrowser(t)
	agg := fixture.Path("eee/ask-sre_20251123_3f1c2a9e.json")
	// Other fields beside k-eval's: kept, and the page says so.
	agg, inst := withExtra(t, agg, fixture.Path("eee/ask-sre_20251123_3f1c2a9e.detailed.jsonl"))
	lines := strings.SplitAfter(string(fixture.Read(t, "eee/ask-sre_20251123_3f1c2a9e.detailed.jsonl")), "\n")
	partial := filepath.Join(t.TempDir(), "partial.jsonl")
	os.WriteFile(partial, []byte(strings.Join(lines[:5], "")), 0o644)

	err := chromedp.Do(ctx,
		chromedp.Navigate(base+"/runs"),
		chromedp.Click(chromedp.CSS("#import-run summary")),
		chromedp.WaitVisible(chromedp.CSS("#import-run-form")),
		chromedp.SetUploadFiles(chromedp.CSS("#results"), []string{agg}),
		chromedp.SetUploadFiles(chromedp.CSS("#instances"), []string{partial}),
		chromedp.Click(chromedp.CSS("#import-run-form button[type=submit]")),
		chromedp.WaitVisible(chromedp.CSS("#import-error")),
	)
	if err != nil {
		t.Fatalf("import a partial file: %v", err)
	}
	screenshot(t, ctx, "import-error")
	errText := textOf(t, ctx, "#import-error")
	if !strings.Contains(errText, `partial.jsonl: condition "with_graph" has 2 of the 3 samples`) || !strings.Contains(errText, "Nothing was imported") {
		t.Errorf("error = %q", errText)
	}
	if runs := textOf(t, ctx, "main"); strings.Contains(runs, "ask-sre") {
		t.Errorf("a refused import is listed: %q", runs)
	}

	err = chromedp.Do(ctx,
		chromedp.SetUploadFiles(chromedp.CSS("#results"), []string{agg}),
		chromedp.SetUploadFiles(chromedp.CSS("#instances"), []string{inst}),
		chromedp.Click(chromedp.CSS("#import-run-form button[type=submit]")),
		chromedp.WaitVisible(chromedp.CSS("#run-imported")),
		chromedp.WaitVisible(chromedp.CSS("#summary")),
	)
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	screenshot(t, ctx, "imported-run")
	if flash := textOf(t, ctx, ".flash"); !strings.Contains(flash, `Imported 12 results of "ask-sre"`) ||
		!strings.Contains(flash, "5 fields the files hold that assay does not read are kept with the run, in its JSON export") {
		t.Errorf("flash = %q", flash)
	}
	summary := textOf(t, ctx, "#summary")
	// By hand: with_graph completeness 5,5 | 4,4 | 4,4 → 4.33; baseline 19/6 → 3.17.
	for _, want := range []string{"with_graph", "4.33", "3.17"} {
		if !strings.Contains(summary, want) {
			t.Errorf("summary lacks %q:\n%s", want, summary)
		}
	}
	if strings.Contains(textOf(t, ctx, "main"), "Resume") {
		t.Error("an imported run offers Resume")
	}

	url, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	err = chromedp.Do(ctx,
		chromedp.Navigate(strings.Split(url, "?")[0]+"/samples"),
		chromedp.WaitVisible(chromedp.CSS("#samples")),
		chromedp.Click(chromedp.CSS("#samples a.sample-link")),
		chromedp.WaitVisible(chromedp.CSS("#sample-summary")),
	)
	if err != nil {
		t.Fatalf("open a sample: %v", err)
	}
	screenshot(t, ctx, "imported-sample")
	reasoning := textOf(t, ctx, "main")
	if !strings.Contains(reasoning, "completeness reasoning baseline s0 r0") || !strings.Contains(reasoning, "Rome (with_graph, run 1)") {
		t.Errorf("the sample page lacks the answers or the judge's reasoning:\n%.3000s", reasoning)
	}

	// The same files again lead to the run they made; nothing is stored twice.
	err = chromedp.Do(ctx,
		chromedp.Navigate(base+"/runs"),
		chromedp.Click(chromedp.CSS("#import-run summary")),
		chromedp.WaitVisible(chromedp.CSS("#import-run-form")),
		chromedp.SetUploadFiles(chromedp.CSS("#results"), []string{agg}),
		chromedp.SetUploadFiles(chromedp.CSS("#instances"), []string{inst}),
		chromedp.Click(chromedp.CSS("#import-run-form button[type=submit]")),
		chromedp.WaitVisible(chromedp.CSS("#run-imported")),
	)
	if err != nil {
		t.Fatalf("import again: %v", err)
	}
	again, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	if flash := textOf(t, ctx, ".flash"); !strings.Contains(flash, "imported before") || strings.Split(again, "?")[0] != strings.Split(url, "?")[0] {
		t.Errorf("imported again: %s, flash %q; the first import is %s", again, flash, url)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/runs"), chromedp.WaitVisible(chromedp.CSS("#import-run"))); err != nil {
		t.Fatal(err)
	}
	imported, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll(".badge.imported").length`))
	if err != nil {
		t.Fatal(err)
	}
	if imported != 1 {
		t.Errorf("the runs list shows %d imported runs after two imports of the same files", imported)
	}
}
