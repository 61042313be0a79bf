package main

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"assay/internal/fixture"
)

// Uploading GSM8K's bytes a second time as qa, in a browser, opens another
// dataset read that way, whose flash names the dataset the bytes also are.
func TestBrowserReuploadAsAnotherKindIsAnotherDataset(t *testing.T) {
	t.Parallel()
	base := startServer(t)
	ctx := newBrowser(t)
	file := fixture.Path("gsm8k.jsonl")
	var first, second string
	upload := func(kind string, at *string) {
		t.Helper()
		err := chromedp.Do(ctx,
			chromedp.Navigate(base+"/datasets"),
			chromedp.WaitReady(chromedp.CSS("#upload")),
			chromedp.SetValue(chromedp.CSS("#kind"), kind),
			chromedp.SetUploadFiles(chromedp.CSS("#file"), []string{file}),
			chromedp.WaitVisible(chromedp.CSS("#drop.over")),
			chromedp.Click(chromedp.CSS("#upload button[type=submit]")),
			chromedp.WaitVisible(chromedp.CSS("#sha256")),
		)
		if err != nil {
			t.Fatalf("upload as %q: %v", kind, err)
		}
		if *at, err = chromedp.Run(ctx, chromedp.Evaluate[string](`location.pathname`)); err != nil {
			t.Fatal(err)
		}
	}
	upload("", &first)
	upload("qa", &second)
	screenshot(t, ctx, "reupload-as-qa")
	flash := textOf(t, ctx, ".flash")
	if first == second || !strings.Contains(flash, "as qa") || !strings.Contains(flash, "These bytes are also dataset 1") ||
		!strings.Contains(flash, "(as math") {
		t.Errorf("second upload at %s (first at %s): %q", second, first, flash)
	}
}
