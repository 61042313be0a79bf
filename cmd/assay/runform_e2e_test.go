package main

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"assay/store/ingest"
	"assay/tally"
)

// Changing the dataset swaps the run form in place; the agent's kind must
// still show its own fields afterwards.
func TestBrowserRunFormCommandAgentAfterChangingTheDataset(t *testing.T) {
	t.Parallel()
	dbPath := filepath.Join(t.TempDir(), "assay.db")
	seedDatasetAndCondition(t, dbPath)
	db, err := tally.Open(context.Background(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := ingest.Import(context.Background(), db, []byte("question,A,B,C,D,answer\n2+2?,3,4,5,6,B\n"),
		ingest.Options{Filename: "quiz.csv"}, "quiz"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	base := startServer(t, "--db", dbPath, "--allow-command-agents")
	ctx := newBrowser(t)

	const swapDataset = `window.before = document.getElementById("run-form");
		const sel = document.getElementById("dataset");
		sel.value = sel.querySelector("option:not([selected]):not([value=''])").value;
		sel.dispatchEvent(new Event("change", {bubbles: true})); true`
	err = chromedp.Do(ctx,
		chromedp.Navigate(base+"/runs/new"),
		chromedp.WaitVisible(chromedp.CSS("#run-form")),
		chromedp.Evaluate[chromedp.Void](swapDataset),
	)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById("run-form") !== window.before && !!document.getElementById("run-form")`,
		chromedp.WithPollingInterval(20*time.Millisecond))); err != nil {
		t.Fatalf("the form was never swapped: %v", err)
	}
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`input[name=agent_type][value=command]`)),
		chromedp.WaitVisible(chromedp.CSS("#agent_command")),
		chromedp.WaitNotVisible(chromedp.CSS("#agent_base_url")),
	)
	if err != nil {
		t.Fatalf("after changing the dataset, the command agent's fields: %v", err)
	}
	screenshot(t, ctx, "run-form-command")
	// And back.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`input[name=agent_type][value=openai]`)),
		chromedp.WaitVisible(chromedp.CSS("#agent_base_url")), chromedp.WaitNotVisible(chromedp.CSS("#agent_command"))); err != nil {
		t.Fatal(err)
	}
}
