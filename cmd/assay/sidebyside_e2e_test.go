package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// A sample's conditions read side by side: one column each, with the
// judge's scores under each answer; the choice is kept in the URL and by
// the next sample.
func TestBrowserSampleSideBySide(t *testing.T) {
	t.Parallel()
	dbPath, id := finishedRun(t, 4)
	base := startServer(t, "--db", dbPath)
	ctx := newBrowser(t)
	err := chromedp.Do(ctx,
		chromedp.Navigate(fmt.Sprintf("%s/runs/%d/samples/1", base, id)),
		chromedp.WaitVisible(chromedp.CSS("#layout-columns")),
		chromedp.Click(chromedp.CSS("#layout-columns")),
		chromedp.WaitVisible(chromedp.CSS("#conditions.side-by-side")),
	)
	if err != nil {
		t.Fatal(err)
	}
	// Two conditions, their tops level and their lefts apart.
	rects, err := chromedp.Run(ctx, chromedp.Evaluate[[][2]float64](`Array.from(document.querySelectorAll("#conditions .condition-block")).map(e => { const r = e.getBoundingClientRect(); return [r.top, r.left]; })`))
	if err != nil || len(rects) != 2 || rects[0][0] != rects[1][0] || rects[1][1] <= rects[0][1] {
		t.Fatalf("the conditions' blocks at %v (%v): want two columns", rects, err)
	}
	if n, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#conditions .condition-block:nth-child(2) table.scores").length`)); n == 0 {
		t.Error("the second column has no judge scores")
	}
	screenshot(t, ctx, "sample-side-by-side")
	next, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#next-sample").href`))
	if err != nil || !strings.Contains(next, "layout=columns") {
		t.Fatalf("the next sample's link %q (%v) does not keep the layout", next, err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(next), chromedp.WaitVisible(chromedp.CSS("#conditions.side-by-side"))); err != nil {
		t.Fatalf("the next sample is not side by side: %v", err)
	}
}
