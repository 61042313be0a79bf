package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"assay/runner/llm/llmtest"
)

// A sweep of twelve conditions, read in a desktop window: the report, the
// samples table and its grid (a column per condition) fit the window, wide
// tables scrolling in their boxes; the folded variance charts are drawn when
// opened.
func TestBrowserSweepOfConditions(t *testing.T) {
	t.Parallel()
	srv := llmtest.New(varied())
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	var data, conditions strings.Builder
	for i := 1; i <= 4; i++ {
		fmt.Fprintf(&data, "{\"id\": \"q%d\", \"question\": \"What is %d + %d?\", \"answer\": \"%d\"}\n", i, i, i, 2*i)
	}
	for i := 1; i <= 12; i++ {
		fmt.Fprintf(&conditions, "  prompt-variant-%02d: {system_prompt: \"Answer in style %d.\"}\n", i, i)
	}
	os.WriteFile(filepath.Join(dir, "questions.jsonl"), []byte(data.String()), 0o644)
	cfg := fmt.Sprintf("name: sweep\ndataset: {path: ./questions.jsonl}\nagent: {type: openai, model: agent-model, base_url: %q}\n"+
		"judge: {model: judge-model, base_url: %q, seed: 7}\nconditions:\n%sexecution: {num_repetitions: 1, max_concurrent: 8}\n",
		srv.URL, srv.URL, conditions.String())
	cfgPath := filepath.Join(dir, "run.yaml")
	os.WriteFile(cfgPath, []byte(cfg), 0o644)
	db := filepath.Join(dir, "assay.db")
	if err := run(context.Background(), []string{"run", "--config", cfgPath, "--db", db, "--quiet"}, io.Discard, io.Discard); err != nil {
		t.Fatalf("assay run: %v", err)
	}
	id := lastRun(t, db)
	base := startServer(t, "--db", db)
	ctx := newBrowser(t)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fmt.Sprintf("/runs/%d", id), fmt.Sprintf("/runs/%d/samples", id), fmt.Sprintf("/runs/%d/samples?view=grid", id)} {
		if err := chromedp.Do(ctx, chromedp.Navigate(base+p), chromedp.WaitReady(chromedp.CSS("footer, main"))); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		got, err := chromedp.Run(ctx, chromedp.Evaluate[[]any](overflow))
		if err != nil {
			t.Fatal(err)
		}
		if got[0].(float64) > got[1].(float64) {
			t.Errorf("%s is %v px wide in a %v px window: %v", p, got[0], got[1], got[2])
		}
		screenshot(t, ctx, "sweep"+strings.NewReplacer("/", "-", "?", "-", "=", "").Replace(p))
	}

	if err := chromedp.Do(ctx, chromedp.Navigate(fmt.Sprintf("%s/runs/%d", base, id)), chromedp.WaitReady(chromedp.CSS("footer, main"))); err != nil {
		t.Fatal(err)
	}
	folded := `document.querySelectorAll("details.variance-charts-fold .chart")`
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](folded+".length")); err != nil || n != 12 {
		t.Fatalf("%d variance charts folded (%v), want one per condition", n, err)
	}
	drawn := `[...` + folded + `].filter(el => { const c = echarts.getInstanceByDom(el); return c && c.getWidth() > 100; }).length`
	err := chromedp.Do(ctx, chromedp.Click("details.variance-charts-fold summary"),
		chromedp.Evaluate[chromedp.Void](folded+"[0].scrollIntoView(); true"),
		chromedp.Poll[chromedp.Void](drawn+" >= 1", chromedp.WithPollingInterval(20*time.Millisecond)))
	if err != nil {
		t.Fatalf("the first variance chart was not drawn once opened: %v", err)
	}
}
