package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"assay/tally"
)

// TestBrowserDeleteAsksFirst deletes a run from its page: declined, nothing
// happens; accepted, the run is gone with its results.
func TestBrowserDeleteAsksFirst(t *testing.T) {
	t.Parallel()
	dbPath, id := finishedRun(t, 2)
	base := startServer(t, "--db", dbPath)
	ctx := newBrowser(t)
	page := fmt.Sprintf("%s/runs/%d", base, id)
	err := chromedp.Do(ctx,
		chromedp.Navigate(page),
		chromedp.WaitVisible(chromedp.CSS("#delete-run button")),
		chromedp.Evaluate[chromedp.Void](`window.confirm = () => false`),
		chromedp.Click(chromedp.CSS("#delete-run button")),
		chromedp.Evaluate[chromedp.Void](`window.confirm = () => true`),
		chromedp.WaitVisible(chromedp.CSS("#summary")),
	)
	if err != nil {
		t.Fatal(err)
	}
	db, err := tally.Open(context.Background(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Run(context.Background(), id); err != nil {
		t.Fatal("declining the confirmation deleted the run")
	}
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS("#delete-run button")),
		chromedp.WaitVisible(chromedp.CSS("h1")),
	)
	if err != nil {
		t.Fatal(err)
	}
	flash := textOf(t, ctx, ".flash")
	if !strings.Contains(flash, fmt.Sprintf("Deleted run #%d", id)) || !strings.Contains(flash, "12 results") {
		t.Errorf("flash %q", flash)
	}
	if _, err := db.Run(context.Background(), id); err == nil {
		t.Error("the run is still there")
	}
}
