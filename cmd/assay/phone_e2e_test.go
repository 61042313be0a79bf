package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// overflow finds what makes the page wider than the window: the page's
// width and the widest elements that are not inside a box that scrolls.
const overflow = `(() => {
	const w = document.documentElement.clientWidth;
	const out = [];
	for (const el of document.querySelectorAll("body *")) {
		const r = el.getBoundingClientRect();
		if (r.right <= w + 1 || r.width === 0) continue;
		let p = el.parentElement, scrolled = false;
		while (p && p !== document.body) {
			const s = getComputedStyle(p);
			if ((s.overflowX === "auto" || s.overflowX === "scroll" || s.overflowX === "hidden") && p.getBoundingClientRect().right <= w + 1) { scrolled = true; break; }
			p = p.parentElement;
		}
		if (!scrolled) out.push(el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + (el.className && typeof el.className === "string" ? "." + el.className.split(" ").join(".") : "") + " → " + Math.round(r.right));
	}
	return [document.documentElement.scrollWidth, w, out.slice(0, 8).join("; ")];
})()`

// Every page fits a phone's 390 px: tables and charts scroll or shrink
// inside their boxes, the page itself never scrolls sideways.
func TestBrowserPagesFitAPhone(t *testing.T) {
	t.Parallel()
	dbPath, id := finishedRun(t, 6)
	base := startServer(t, "--db", dbPath)
	ctx := newBrowser(t)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844)); err != nil {
		t.Fatal(err)
	}
	pages := []string{"/runs", "/datasets", "/datasets/1", "/conditions", "/rubrics", "/rubrics/new", "/runs/new", "/settings",
		fmt.Sprintf("/runs/%d", id), fmt.Sprintf("/runs/%d/samples", id), fmt.Sprintf("/runs/%d/samples?view=grid", id), fmt.Sprintf("/runs/%d/samples/1", id),
		fmt.Sprintf("/compare?a=%d&b=%d", id, id), fmt.Sprintf("/runs/%d/routing", id)}
	for _, p := range pages {
		if err := chromedp.Do(ctx, chromedp.Navigate(base+p), chromedp.WaitReady(chromedp.CSS("footer, main"))); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if strings.HasPrefix(p, "/runs/") && !strings.Contains(p, "samples") && !strings.Contains(p, "routing") && p != "/runs/new" {
			checkCharts(t, ctx, p)
		}
		got, err := chromedp.Run(ctx, chromedp.Evaluate[[]any](overflow))
		if err != nil {
			t.Fatal(err)
		}
		if got[0].(float64) > got[1].(float64) {
			t.Errorf("%s is %v px wide in a %v px window: %v", p, got[0], got[1], got[2])
		}
		screenshot(t, ctx, "phone"+strings.NewReplacer("/", "-", "?", "-", "&", "-", "=", "").Replace(p))
	}
}
