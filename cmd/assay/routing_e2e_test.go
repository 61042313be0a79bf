package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"assay/internal/fixture"
)

// A reader opens the Routing page of a three-model run from its report: a
// row per algorithm with the figures `assay route --json` prints for the
// same settings, and both charts drawn.
func TestBrowserRoutingPage(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"testdata:gsm8k.jsonl", "shared:gsm8k_sample.jsonl"} {
		t.Run(name, func(t *testing.T) {
			path, ok := strings.CutPrefix(name, "shared:")
			if ok {
				path = fixture.Shared(t, path)
			} else {
				path = fixture.Path(strings.TrimPrefix(name, "testdata:"))
			}
			browseRouting(t, path)
		})
	}
}

func browseRouting(t *testing.T, path string) {
	dbPath, id := routedRun(t, path)
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"route", "--run", fmt.Sprint(id), "--db", dbPath, "--json"}, &out, &errOut); err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	var want struct {
		Algorithms []struct {
			Name    string
			Quality float64
		}
	}
	json.Unmarshal(out.Bytes(), &want)

	base := startServer(t, "--db", dbPath)
	ctx := newBrowser(t)
	err := chromedp.Do(ctx,
		chromedp.Navigate(fmt.Sprintf("%s/runs/%d", base, id)),
		chromedp.WaitVisible(chromedp.CSS("#routing-link")),
		chromedp.Evaluate[chromedp.Void](`window.leaving = true; document.getElementById("routing-link").click(); true`),
	)
	if err != nil {
		t.Fatal(err)
	}
	waitNewPage(t, ctx, "/routing")
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS("#routing-table"))); err != nil { // a replay may take a while
		t.Fatal(err)
	}
	rows, err := chromedp.Run(ctx, chromedp.Evaluate[[][]string](`Array.from(document.querySelectorAll("#routing-table tbody tr")).map(tr =>
		Array.from(tr.querySelectorAll("td")).map(td => td.innerText.trim()))`))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(want.Algorithms) || len(rows) != 12 {
		t.Fatalf("%d rows, want %d", len(rows), len(want.Algorithms))
	}
	for i, a := range want.Algorithms {
		if rows[i][0] != a.Name || rows[i][1] != fmt.Sprintf("%.3f", a.Quality) {
			t.Errorf("row %d: %q, the command says %s %.3f", i, rows[i][:2], a.Name, a.Quality)
		}
	}
	scrollThroughCharts(t, ctx, "routing")
	drawn := `typeof echarts !== 'undefined' && document.querySelectorAll(".chart").length === 3 &&
		Array.from(document.querySelectorAll('.chart')).every(el => { const c = echarts.getInstanceByDom(el); return c && c.getOption().series.length >= 3 })`
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](drawn, chromedp.WithPollingInterval(20*time.Millisecond))); err != nil {
		t.Fatalf("the routing charts were never drawn: %v", err)
	}
	screenshot(t, ctx, "routing")
	// It fits a phone: tables scroll inside their box.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844), chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#routing-table"))); err != nil {
		t.Fatal(err)
	}
	fit, err := chromedp.Run(ctx, chromedp.Evaluate[[]any](overflow))
	if err != nil {
		t.Fatal(err)
	}
	if fit[0].(float64) > fit[1].(float64) {
		t.Errorf("the Routing page is %v px wide in a %v px window: %v", fit[0], fit[1], fit[2])
	}
	screenshot(t, ctx, "phone-routing")
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatal(err)
	}
	// The exported report carries the same replay.
	var html, e bytes.Buffer
	if err := run(context.Background(), []string{"export", "--run", fmt.Sprint(id), "--db", dbPath, "--format", "html"}, &html, &e); err != nil {
		t.Fatal(err)
	}
	for _, a := range want.Algorithms {
		if !strings.Contains(html.String(), fmt.Sprintf(`<td class="mono">%s</td><td class="num"><strong>%.3f</strong>`, a.Name, a.Quality)) {
			t.Errorf("the exported report lacks %s at %.3f", a.Name, a.Quality)
		}
	}
	// Other weights, kept in the URL; a bad one is named.
	err = chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS("#wc"), "-1"),
		chromedp.Evaluate[chromedp.Void](`window.leaving = true; document.querySelector("#routing-form button").click(); true`))
	if err != nil {
		t.Fatal(err)
	}
	waitNewPage(t, ctx, "wc=-1")
	if got := textOf(t, ctx, "#form-error"); !strings.Contains(got, "Cost weight") {
		t.Errorf("a negative weight: %q", got)
	}
	if v := cspViolations(ctx); len(v) > 0 {
		t.Errorf("CSP violations: %v", v)
	}
}
