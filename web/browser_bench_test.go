package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// pageTimes is what the browser says of a page it loaded: when its first
// text was painted, when its HTML was read and its scripts run
// (DOMContentLoaded ended) and when it was loaded, in milliseconds from
// the start of the navigation; and how many of its charts were drawn then.
type pageTimes struct {
	Paint  float64 `json:"paint"`
	Ready  float64 `json:"ready"`
	Loaded float64 `json:"loaded"`
	Charts int     `json:"charts"`
	Drawn  int     `json:"drawn"`
}

const pageTimesJS = `(() => {
	const nav = performance.getEntriesByType("navigation")[0];
	const paint = performance.getEntriesByName("first-contentful-paint")[0];
	const charts = Array.from(document.querySelectorAll(".chart"));
	return {paint: paint ? paint.startTime : -1, ready: nav.domContentLoadedEventEnd, loaded: nav.loadEventEnd,
		charts: charts.length, drawn: charts.filter(el => typeof echarts !== "undefined" && echarts.getInstanceByDom(el)).length};
})()`

// benchBrowser loads a page in headless Chromium, a window of 1280 × 900,
// a few times in one browser (its cache kept, as a reader's is between
// pages) and prints the median of what the browser says of each load
// after the first. It needs Chromium (make test-deps).
func benchBrowser(b *testing.B, h http.Handler, path string) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		b.Skip("chromium is not installed: run `make test-deps`")
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	alloc, cancel := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.UserDataDir(b.TempDir()),
		chromedp.WindowSize(1280, 900))...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(alloc)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	const loads = 5
	var all []pageTimes
	for i := range loads {
		err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+path),
			chromedp.Poll[chromedp.Void](`document.readyState === "complete" && performance.getEntriesByType("navigation")[0].loadEventEnd > 0 &&
				performance.getEntriesByName("first-contentful-paint").length > 0`))
		if err != nil {
			b.Fatalf("load %s: %v", path, err)
		}
		t, err := chromedp.Run(ctx, chromedp.Evaluate[pageTimes](pageTimesJS))
		if err != nil {
			b.Fatal(err)
		}
		if i > 0 {
			all = append(all, t)
		}
	}
	median := func(f func(pageTimes) float64) float64 {
		v := make([]float64, len(all))
		for i, t := range all {
			v[i] = f(t)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	ready := median(func(t pageTimes) float64 { return t.Ready })
	b.ReportMetric(ready, "ready-ms")
	charts := ""
	if all[0].Charts > 0 {
		charts = fmt.Sprintf("; %d of its %d charts drawn then (the others as they are reached)", all[0].Drawn, all[0].Charts)
	}
	fmt.Printf("%-58s in Chromium: painted at %4.0f ms, ready at %4.0f ms, loaded at %4.0f ms%s\n",
		path, median(func(t pageTimes) float64 { return t.Paint }), ready, median(func(t pageTimes) float64 { return t.Loaded }), charts)
}
