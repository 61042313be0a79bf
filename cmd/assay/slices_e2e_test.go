package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"assay/internal/fixture"
	"assay/runner/llm/llmtest"
)

// A reader slices a report by subject from its page: the choice lands in
// the URL, the table has a row per subject and every chart is drawn.
func TestBrowserReportBySlice(t *testing.T) {
	t.Parallel()
	agent := func(req *llmtest.ChatRequest) llmtest.Reply {
		if strings.Contains(req.Messages[0].Content, "Think") && strings.Contains(string(req.Body), "river") {
			return llmtest.Reply{Content: "The answer is C."}
		}
		return llmtest.Reply{Content: "The answer is B."}
	}
	srv := llmtest.New(agent)
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	cfg := fmt.Sprintf(`name: sliced
dataset: {path: %q}
agent: {type: openai, model: agent-model, base_url: %q}
conditions:
  baseline: {system_prompt: "Answer."}
  thinking: {system_prompt: "Think, then answer."}
execution: {num_repetitions: 2}
`, fixture.Path("mmlu.jsonl"), srv.URL)
	os.WriteFile(filepath.Join(dir, "run.yaml"), []byte(cfg), 0o644)
	dbPath := filepath.Join(dir, "assay.db")
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"run", "--config", filepath.Join(dir, "run.yaml"), "--db", dbPath}, &out, &errOut); err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	base := startServer(t, "--db", dbPath)
	ctx := newBrowser(t)
	err := chromedp.Do(ctx,
		chromedp.Navigate(base+"/runs/1"),
		chromedp.WaitVisible(chromedp.CSS("#slice-form")),
		chromedp.SetValue(chromedp.CSS("#slice"), "subject"),
		chromedp.Evaluate[chromedp.Void](`window.leaving = true; document.querySelector("#slice-form button").click(); true`),
	)
	if err != nil {
		t.Fatal(err)
	}
	waitNewPage(t, ctx, "slice=subject")
	if got := textOf(t, ctx, "#slice-table tbody"); !strings.Contains(got, "chemistry") || !strings.Contains(got, "geography") {
		t.Errorf("the slice table: %q", got)
	}
	if n, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#slice-table tbody tr").length`)); n != 4 {
		t.Errorf("%d subjects in the table, want 4", n)
	}
	if got := textOf(t, ctx, "#slice-paired"); !strings.Contains(got, "geography") {
		t.Errorf("the paired comparison per subject: %q", got)
	}
	checkCharts(t, ctx, "sliced report")
	screenshot(t, ctx, "report-slices")
	if v := cspViolations(ctx); len(v) > 0 {
		t.Errorf("CSP violations: %v", v)
	}
}
