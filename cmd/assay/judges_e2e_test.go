package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/chromedp/chromedp"
)

// A reader opens the judges of a run's answers from its report, after the
// answers were judged again by a stricter judge: a row per judge, the
// answers where they differ, and no script or style the page refuses.
func TestBrowserJudgesOfTheSameAnswers(t *testing.T) {
	t.Parallel()
	var agentCalls, judgeCalls atomic.Int64
	srv := strictAndKindJudges(t, &agentCalls, &judgeCalls)
	dir := t.TempDir()
	var data strings.Builder
	for i := 1; i <= 4; i++ {
		fmt.Fprintf(&data, "{\"question\": \"What is %d + %d?\", \"answer\": \"%d\"}\n", i, i, 2*i)
	}
	os.WriteFile(filepath.Join(dir, "qa.jsonl"), []byte(data.String()), 0o644)
	os.WriteFile(filepath.Join(dir, "run.yaml"), fmt.Appendf(nil, `name: first
dataset: {path: ./qa.jsonl}
agent: {type: openai, model: agent-model, base_url: %q}
judge: {model: kind-judge, base_url: %q}
conditions: {plain: {}}
execution: {num_repetitions: 1}
`, srv.URL, srv.URL), 0o644)
	os.WriteFile(filepath.Join(dir, "strict.yaml"), fmt.Appendf(nil, "judge: {model: strict-judge, base_url: %q}\n", srv.URL), 0o644)
	db := filepath.Join(dir, "assay.db")
	for _, args := range [][]string{{"run", "--config", filepath.Join(dir, "run.yaml")}, {"rejudge", "--run", "1", "--config", filepath.Join(dir, "strict.yaml")}} {
		if err := run(context.Background(), append(args, "--db", db, "--quiet"), io.Discard, io.Discard); err != nil {
			t.Fatalf("assay %s: %v", args[0], err)
		}
	}
	base := startServer(t, "--db", db)
	ctx := newBrowser(t)
	err := chromedp.Do(ctx,
		chromedp.Navigate(base+"/runs/1"),
		chromedp.WaitVisible(chromedp.CSS("#judges-link")),
		chromedp.Evaluate[chromedp.Void](`window.leaving = true; document.getElementById("judges-link").click(); true`),
	)
	if err != nil {
		t.Fatal(err)
	}
	waitNewPage(t, ctx, "/judges")
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS("#judges"))); err != nil {
		t.Fatal(err)
	}
	rows, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#judges tbody tr")).map(tr => tr.innerText)`))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || !strings.Contains(rows[0], "kind-judge") || !strings.Contains(rows[1], "strict-judge") {
		t.Fatalf("the judges: %q", rows)
	}
	differ, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#judges-differ tbody tr").length`))
	if err != nil || differ == 0 {
		t.Errorf("where the judges differ: %d rows, %v", differ, err)
	}
	screenshot(t, ctx, "judges")
	if v := cspViolations(ctx); len(v) > 0 {
		t.Errorf("the page broke its content security policy: %v", v)
	}
}
