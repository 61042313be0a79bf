package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"assay/report"
	"assay/tally"
)

// chartData is, for each chart container of the page, the number of data
// points of its first series once ECharts has drawn it (-1: not drawn).
const chartData = `Array.from(document.querySelectorAll('.chart')).map(el => {
	const c = echarts.getInstanceByDom(el);
	return c ? c.getOption().series[0].data.length : -1;
})`

// checkCharts fails unless the page has charts and each has been drawn with
// data once scrolled to.
func checkCharts(t *testing.T, ctx context.Context, page string) {
	t.Helper()
	scrollThroughCharts(t, ctx, page)
	counts, err := chromedp.Run(ctx, chromedp.Evaluate[[]int](chartData))
	if err != nil {
		t.Fatalf("%s: charts: %v", page, err)
	}
	if len(counts) < 6 {
		t.Errorf("%s: %d charts, want distributions, spread, disagreement, paired and cost", page, len(counts))
	}
	for i, n := range counts {
		if n <= 0 {
			t.Errorf("%s: chart %d has %d data points", page, i, n)
		}
	}
	// Every chart names every series in a legend that fits above its plot,
	// under a title that fits its width.
	layout, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](chartLayout))
	if err != nil {
		t.Fatalf("%s: chart layout: %v", page, err)
	}
	for _, problem := range layout {
		t.Errorf("%s: %s", page, problem)
	}
}

// chartLayout lists the drawn charts whose title is wider than the chart,
// whose legend pages (not every series shown) or runs into the plot.
const chartLayout = `Array.from(document.querySelectorAll('.chart')).flatMap(el => {
	const c = echarts.getInstanceByDom(el);
	if (!c) return [];
	const m = c.getModel(), out = [];
	const title = c.getViewOfComponentModel(m.getComponent('title')).group.getBoundingRect();
	if (title.width > el.clientWidth) out.push(el.id + ': title ' + Math.round(title.width) + 'px wide in ' + el.clientWidth);
	const lm = m.getComponent('legend');
	if (lm && lm.get('show') !== false) {
		const o = c.getOption();
		if (o.legend[0].type === 'scroll') out.push(el.id + ': a legend that pages');
		const lv = c.getViewOfComponentModel(lm).group;
		const grid = m.getComponent('grid');
		const plotTop = grid ? grid.coordinateSystem.getRect().y : Infinity;
		if (lv.y + lv.getBoundingRect().height > plotTop) out.push(el.id + ': the legend runs into the plot');
	}
	return out;
})`

// scrollThroughCharts scrolls to each chart of the page in turn, as a
// reader would, and waits for it to be drawn: a chart is drawn as it comes
// near the window.
func scrollThroughCharts(t *testing.T, ctx context.Context, page string) {
	t.Helper()
	loaded := `typeof echarts !== 'undefined' && document.readyState === 'complete'`
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](loaded, chromedp.WithPollingInterval(20*time.Millisecond))); err != nil {
		t.Fatalf("%s: the page's scripts never loaded: %v", page, err)
	}
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('.chart').length`))
	if err != nil || n == 0 {
		t.Fatalf("%s: %d charts (%v)", page, n, err)
	}
	for i := range n {
		chart := fmt.Sprintf(`document.querySelectorAll('.chart')[%d]`, i)
		err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](chart+`.scrollIntoView(); true`),
			chromedp.Poll[chromedp.Void](`!!echarts.getInstanceByDom(`+chart+`)`, chromedp.WithPollingInterval(20*time.Millisecond)))
		if err != nil {
			t.Fatalf("%s: chart %d was never drawn: %v", page, i, err)
		}
	}
}

// farCharts counts the charts of the page whose top is more than two
// windows below the window's, and of those the ones drawn.
const farCharts = `(() => {
	const far = Array.from(document.querySelectorAll('.chart')).filter(el => el.getBoundingClientRect().top > 2 * innerHeight);
	return [far.length, far.filter(el => echarts.getInstanceByDom(el)).length];
})()`

func summaryOf(t *testing.T, dbPath string, id int64) *report.Summary {
	t.Helper()
	db, err := tally.Open(context.Background(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	sum, err := report.Summarize(context.Background(), db, id)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

func TestBrowserReportShareAndRevoke(t *testing.T) {
	t.Parallel()
	dbPath, id := finishedRun(t, 12)
	want := summaryOf(t, dbPath, id)
	base := startServer(t, "--db", dbPath, "--token", "owner-token-0123456789")
	owner := newBrowser(t)
	report := fmt.Sprintf("%s/runs/%d", base, id)

	err := chromedp.Do(owner,
		chromedp.Navigate(report),
		chromedp.WaitVisible(chromedp.CSS("#token")),
		chromedp.SendKeys(chromedp.CSS("#token"), "owner-token-0123456789"),
		chromedp.Click(chromedp.CSS(`form[action="/login"] button`)),
		chromedp.WaitVisible(chromedp.CSS("#summary")),
	)
	if err != nil {
		t.Fatalf("open the report: %v", err)
	}
	screenshot(t, owner, "report")
	for i, c := range want.Conditions {
		row := fmt.Sprintf("#summary tbody tr:nth-child(%d) ", i+1)
		mean := fmt.Sprintf("%.2f", c.Metrics[0].Mean)
		if got := textOf(t, owner, row+"td:nth-child(1)") + " " + textOf(t, owner, row+"td:nth-child(2)"); got != c.Name+" "+mean {
			t.Errorf("summary row %d: %q, want %s %s", i+1, got, c.Name, mean)
		}
	}
	// The charts far below the window are drawn only when reached: the
	// report is ready to read and scroll before they are.
	if _, err := chromedp.Run(owner, chromedp.Poll[bool](`typeof echarts !== 'undefined' && document.readyState === 'complete'`)); err != nil {
		t.Fatal(err)
	}
	if far, err := chromedp.Run(owner, chromedp.Evaluate[[]int](farCharts)); err != nil || len(far) != 2 || far[0] == 0 || far[1] != 0 {
		t.Errorf("charts far below the window, and of those drawn at once: %v (%v); want some, none drawn", far, err)
	}
	checkCharts(t, owner, "report")

	// What each condition gave the agent is one click away.
	err = chromedp.Do(owner,
		chromedp.Click(chromedp.CSS("#condition-details summary")),
		chromedp.WaitVisible(chromedp.CSS("#prompt-template")),
	)
	if err != nil {
		t.Fatalf("open the conditions' details: %v", err)
	}
	if got := textOf(t, owner, "#condition-details"); !strings.Contains(got, "baseline") || !strings.Contains(got, "with-docs") {
		t.Errorf("the conditions' details: %q", got)
	}

	err = chromedp.Do(owner, chromedp.Evaluate[chromedp.Void](`window.leaving = true`),
		chromedp.SetValue(chromedp.CSS("#pair-a"), "with-docs")) // B was with-docs: they swap
	if err == nil {
		waitNewPage(t, owner, "a=with-docs") // the page follows the select to a new address
		err = chromedp.Do(owner, chromedp.WaitVisible(chromedp.CSS("#paired-table")))
	}
	if err != nil {
		t.Fatalf("choose the pair: %v", err)
	}
	if loc, _ := chromedp.Run(owner, chromedp.Location()); !strings.Contains(loc, "?a=with-docs&b=baseline#paired") {
		t.Errorf("after choosing A the page is %s", loc)
	}
	if b, _ := chromedp.Run(owner, chromedp.Value(chromedp.CSS("#pair-b"))); b != "baseline" {
		t.Errorf("after choosing A = with-docs, B is %q", b)
	}
	screenshot(t, owner, "report-paired")

	err = chromedp.Do(owner,
		chromedp.Click(chromedp.CSS("#share")),
		chromedp.WaitVisible(chromedp.CSS("#new-link input")),
	)
	if err != nil {
		t.Fatalf("share: %v", err)
	}
	screenshot(t, owner, "report-share-links")
	link, err := chromedp.Run(owner, chromedp.Evaluate[string](`document.querySelector('#new-link input').value`))
	if err != nil || !strings.HasPrefix(link, base+"/r/") {
		t.Fatalf("share link %q: %v", link, err)
	}

	guest := newBrowser(t) // its own profile: no session cookie
	err = chromedp.Do(guest, chromedp.Navigate(link), chromedp.WaitVisible(chromedp.CSS("#summary")))
	if err != nil {
		t.Fatalf("open the share link without the token: %v", err)
	}
	screenshot(t, guest, "shared")
	forms, _ := chromedp.Run(guest, chromedp.Evaluate[int](`document.querySelectorAll('form').length`))
	if forms != 0 || !strings.Contains(textOf(t, guest, "header"), "read-only") {
		t.Errorf("the shared page has %d forms; header %q", forms, textOf(t, guest, "header"))
	}
	// Printing draws every chart, reached or not; those it draws, still
	// (an opening animation would be printed half done).
	if err := chromedp.Do(guest, chromedp.Poll[chromedp.Void](`typeof echarts !== 'undefined' && document.readyState === 'complete'`)); err != nil {
		t.Fatal(err)
	}
	printed, err := chromedp.Run(guest, chromedp.Evaluate[[]int](`(() => {
		const charts = Array.from(document.querySelectorAll('.chart'));
		const undrawn = charts.filter(el => !echarts.getInstanceByDom(el));
		window.dispatchEvent(new Event('beforeprint'));
		return [charts.length, charts.filter(el => echarts.getInstanceByDom(el)).length,
			undrawn.length, undrawn.filter(el => echarts.getInstanceByDom(el).getOption().animation === false).length];
	})()`))
	if err != nil || len(printed) != 4 || printed[0] == 0 || printed[0] != printed[1] || printed[2] == 0 || printed[2] != printed[3] {
		t.Errorf("charts, those drawn before printing, those not drawn until then, and those drawn still: %v (%v)", printed, err)
	}
	checkCharts(t, guest, "shared report")

	err = chromedp.Do(owner,
		chromedp.Evaluate[chromedp.Void](`window.confirm = () => true`),
		chromedp.Click(chromedp.CSS("#shares .revoke")),
		chromedp.WaitVisible(chromedp.CSS("#shares tr.revoked")),
	)
	if err != nil {
		t.Fatalf("revoke: %v", err)
	}
	err = chromedp.Do(guest, chromedp.Navigate(link), chromedp.WaitVisible(chromedp.CSS("main h1")))
	if err != nil {
		t.Fatalf("reload the revoked link: %v", err)
	}
	if h1 := textOf(t, guest, "main h1"); h1 != "Not Found" {
		t.Errorf("a revoked link shows %q, want Not Found", h1)
	}
}

func TestBrowserExportOpensFromFile(t *testing.T) {
	t.Parallel()
	dbPath, id := finishedRun(t, 8)
	file := filepath.Join(t.TempDir(), "report.html")
	args := []string{"export", "--run", fmt.Sprint(id), "--format", "html", "--db", dbPath, "-o", file}
	if err := run(context.Background(), args, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	ctx := newBrowser(t)
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+file), chromedp.WaitVisible(chromedp.CSS("#summary"))); err != nil {
		t.Fatalf("open the exported file: %v", err)
	}
	screenshot(t, ctx, "export")
	checkCharts(t, ctx, "exported report")
	fetched, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`performance.getEntriesByType('resource').length`))
	if fetched != 0 {
		t.Errorf("the exported report fetched %d resources", fetched)
	}
	// Every sample is in the file, folded; the filter finds one by its text.
	if n, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#transcript-list details.transcript").length`)); n != 8 {
		t.Fatalf("%d samples in the exported file, want 8", n)
	}
	err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS("#transcript-filter"), "q3"),
		chromedp.Poll[chromedp.Void](`document.querySelector("#transcript-count").textContent.startsWith("1 of 8")`, chromedp.WithPollingInterval(20*time.Millisecond)),
		chromedp.Click(chromedp.CSS("#transcript-list details.transcript:not([hidden]) > summary")),
		chromedp.WaitVisible(chromedp.CSS("#transcript-list details[open] table.scores")),
	)
	if err != nil {
		t.Fatalf("filter and open a sample in the exported file: %v", err)
	}
	if got := textOf(t, ctx, "#transcript-list details[open] #question"); !strings.Contains(got, "What is 3 + 3?") {
		t.Errorf("the sample found: %q", got)
	}
	screenshot(t, ctx, "export-transcript")
}

func TestBrowserCompareRuns(t *testing.T) {
	t.Parallel()
	dbPath, ids := finishedRuns(t, 8, 2)
	base := startServer(t, "--db", dbPath)
	ctx := newBrowser(t)
	err := chromedp.Do(ctx,
		chromedp.Navigate(fmt.Sprintf("%s/runs/%d", base, ids[0])),
		chromedp.Click(chromedp.CSS("#other-runs-table .compare-link")),
		chromedp.WaitVisible(chromedp.CSS(".compare-condition")),
	)
	if err != nil {
		t.Fatalf("compare: %v", err)
	}
	screenshot(t, ctx, "compare")
	if runs := textOf(t, ctx, "#compare-runs"); !strings.Contains(runs, fmt.Sprintf("#%d", ids[0])) || !strings.Contains(runs, fmt.Sprintf("#%d", ids[1])) {
		t.Errorf("compare page names %q", runs)
	}
	if n, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('.compare-condition #paired-table tbody tr').length`)); n != 6 {
		t.Errorf("%d metric rows, want 2 conditions × 3 metrics", n)
	}
}

// waitNewPage waits until a new page, whose address holds part, has
// loaded in place of the one marked with window.leaving — across the
// navigation, during which the page cannot be asked.
func waitNewPage(t *testing.T, ctx context.Context, part string) {
	t.Helper()
	check := fmt.Sprintf(`!window.leaving && location.href.includes(%q) && document.readyState === "complete"`, part)
	for ctx.Err() == nil {
		if ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](check)); err == nil && ok {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no new page with %q in its address", part)
}
