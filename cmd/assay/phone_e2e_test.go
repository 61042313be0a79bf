package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"assay/runner/llm/llmtest"
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

// The figures a reader comes for are on the screen, not past its edge: at
// 1280 px a summary of four metrics shows every metric's interval, and at
// 390 px the paired comparison shows each difference with its interval.
func TestBrowserReportFiguresAreOnTheScreen(t *testing.T) {
	t.Parallel()
	srv := llmtest.New(varied())
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	writeSums(dir, 6)
	os.WriteFile(filepath.Join(dir, "run.yaml"), fmt.Appendf(nil, `name: four metrics
dataset: {path: ./questions.jsonl}
agent: {type: openai, model: agent-model, base_url: %q}
judge: {model: judge-model, base_url: %q, seed: 7}
conditions:
  baseline: {system_prompt: "Answer briefly."}
  with-docs: {system_prompt: "Answer briefly; read the docs first."}
evaluators: [rubric, {contains: "Answer"}]
execution: {num_repetitions: 2, max_concurrent: 4}
`, srv.URL, srv.URL), 0o644)
	dbPath := filepath.Join(dir, "assay.db")
	if err := run(context.Background(), []string{"run", "--config", filepath.Join(dir, "run.yaml"), "--db", dbPath, "--quiet"}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	base := startServer(t, "--db", dbPath)
	ctx := newBrowser(t)
	// How far right the last of a selector's visible elements ends, and the window's width.
	rightOf := func(sel string) (float64, float64) {
		t.Helper()
		got, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](fmt.Sprintf(`(() => {
			const els = [...document.querySelectorAll(%q)].filter(e => e.getBoundingClientRect().width > 0);
			return [Math.max(...els.map(e => e.getBoundingClientRect().right)), document.documentElement.clientWidth];
		})()`, sel)))
		if err != nil || len(got) != 2 {
			t.Fatalf("%s: %v", sel, err)
		}
		return got[0], got[1]
	}
	for _, c := range []struct {
		width int64
		sel   string
	}{{1280, "#summary tbody td.nowrap"}, {390, "#paired-table tbody td.diff"}} {
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(c.width, 900), chromedp.Navigate(base+"/runs/1"),
			chromedp.WaitVisible(chromedp.CSS("#paired-table"))); err != nil {
			t.Fatal(err)
		}
		screenshot(t, ctx, fmt.Sprintf("figures-%d", c.width))
		if right, window := rightOf(c.sel); right > window || right <= 0 {
			t.Errorf("at %d px the last of %s ends at %v px, past the window's %v", c.width, c.sel, right, window)
		}
		if c.width == 390 {
			shown, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`getComputedStyle(document.querySelector("#paired-table tbody td.diff"), "::after").content`))
			if !strings.Contains(shown, " – ") {
				t.Errorf("at 390 px the paired comparison shows no interval under its difference: %q", shown)
			}
		}
	}
}
