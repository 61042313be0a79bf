package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"assay/runner/llm/llmtest"
)

// weakReasoning is what the judge says of the one weak answer of samplesRun.
const weakReasoning = "The answer to 3 + 3 is wrong: the reference says 6, the response says 7."

// samplesModel answers every question, marking answers given with the docs,
// and judges them all well but one: the answer to 3 + 3 given with the docs.
func samplesModel() llmtest.Handler {
	judge := func(req *llmtest.ChatRequest) llmtest.Reply {
		body := string(req.Body)
		values := map[string]any{"factual_adherence": 5, "completeness": 4, "helpfulness_and_clarity": 5,
			"factual_adherence_reasoning": "The answer matches the reference.", "unverified_claims": []string{}}
		if strings.Contains(body, "What is 3 + 3?") && strings.Contains(body, "(read the docs)") {
			values["factual_adherence"], values["factual_adherence_reasoning"] = 2, weakReasoning
			values["unverified_claims"] = []string{"The docs say 3 + 3 = 7."}
		}
		answer, _ := llmtest.JudgeAnswer(req, values)
		return llmtest.Reply{Content: answer}
	}
	agent := func(req *llmtest.ChatRequest) llmtest.Reply {
		answer := "The answer is **right**."
		if strings.Contains(req.System(), "docs") {
			answer += " (read the docs)"
		}
		return llmtest.Reply{Content: answer}
	}
	return llmtest.JudgeAndAgent(judge, agent)
}

// samplesRun runs `assay run` over five questions × two conditions × two
// repetitions into a new database and returns its path and the run's id.
func samplesRun(t *testing.T) (string, int64) {
	t.Helper()
	srv := llmtest.New(samplesModel())
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	var data strings.Builder
	for i := 1; i <= 5; i++ {
		fmt.Fprintf(&data, "{\"id\": \"q%d\", \"question\": \"What is %d + %d? Work it out step by step, the way a teacher shows a class that has just met addition, then give the sum.\", \"answer\": \"%d\"}\n", i, i, i, 2*i)
	}
	os.WriteFile(filepath.Join(dir, "questions.jsonl"), []byte(data.String()), 0o644)
	cfg := fmt.Sprintf(`name: samples
dataset: {path: ./questions.jsonl}
agent: {type: openai, model: agent-model, base_url: %q}
judge: {model: judge-model, base_url: %q, seed: 7}
conditions:
  baseline: {system_prompt: "Answer briefly."}
  with-docs: {system_prompt: "Answer briefly; read the docs first."}
execution: {num_repetitions: 2, max_concurrent: 4}
`, srv.URL, srv.URL)
	cfgPath := filepath.Join(dir, "run.yaml")
	os.WriteFile(cfgPath, []byte(cfg), 0o644)
	db := filepath.Join(dir, "assay.db")
	if err := run(context.Background(), []string{"run", "--config", cfgPath, "--db", db, "--quiet"}, io.Discard, io.Discard); err != nil {
		t.Fatalf("assay run: %v", err)
	}
	return db, lastRun(t, db)
}

func TestBrowserFilterSamplesAndReadReasoning(t *testing.T) {
	t.Parallel()
	dbPath, id := samplesRun(t)
	base := startServer(t, "--db", dbPath)
	ctx := newBrowser(t)
	samples := fmt.Sprintf("%s/runs/%d/samples", base, id)

	err := chromedp.Do(ctx, chromedp.Navigate(samples), chromedp.WaitVisible(chromedp.CSS("#samples")))
	if err != nil {
		t.Fatalf("open the samples table: %v", err)
	}
	if n := textOf(t, ctx, "#sample-count"); n != "10 rows" {
		t.Fatalf("the table counts %q, want 10 rows (5 samples × 2 conditions)", n)
	}
	// A condition's name stays on one line beside a long question: it
	// broke at its hyphen ("with-" above "docs").
	lines, err := chromedp.Run(ctx, chromedp.Evaluate[[]int](`Array.from(document.querySelectorAll("#samples tbody td.condition")).map(td => {
		const r = document.createRange(); r.selectNodeContents(td);
		return new Set(Array.from(r.getClientRects()).map(b => Math.round(b.top))).size; })`))
	if err != nil || len(lines) != 10 || slices.Max(lines) != 1 {
		t.Errorf("the condition cells take %v lines, want one each: %v", lines, err)
	}
	err = chromedp.Do(ctx,
		chromedp.SetValue(chromedp.CSS("#condition"), "with-docs"),
		chromedp.SetValue(chromedp.CSS("#metric"), "rubric.factual_adherence"),
		chromedp.SendKeys(chromedp.CSS("#below"), "3"),
		chromedp.Click(chromedp.CSS("#apply-filter")),
		chromedp.WaitVisible(chromedp.CSS(`#sample-count strong`)),
	)
	if err != nil {
		t.Fatalf("filter: %v", err)
	}
	screenshot(t, ctx, "samples-filtered")
	if n := textOf(t, ctx, "#sample-count"); n != "1 of 10 rows match" {
		t.Errorf("after filtering: %q", n)
	}
	row := textOf(t, ctx, "#samples tbody tr")
	for _, want := range []string{"q3", "What is 3 + 3?", "with-docs", "2.00 ± 0.00"} {
		if !strings.Contains(row, want) {
			t.Errorf("the filtered row %q lacks %q", row, want)
		}
	}
	loc, _ := chromedp.Run(ctx, chromedp.Location())
	for _, want := range []string{"condition=with-docs", "metric=rubric.factual_adherence", "below=3"} {
		if !strings.Contains(loc, want) {
			t.Errorf("the URL %s does not keep %s", loc, want)
		}
	}

	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS("a.sample-link")),
		chromedp.WaitVisible(chromedp.CSS("#sample-name")),
	)
	if err != nil {
		t.Fatalf("open the sample: %v", err)
	}
	card := "#c-with-docs-1 "
	if got := textOf(t, ctx, card+"table.scores tbody tr:first-child td.reasoning"); got != weakReasoning {
		t.Errorf("the judge's reasoning reads %q, want %q", got, weakReasoning)
	}
	if got := textOf(t, ctx, card+".claims li"); got != "The docs say 3 + 3 = 7." {
		t.Errorf("unverified claim %q", got)
	}
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(card+"details.raw summary")),
		chromedp.WaitVisible(chromedp.CSS(card+"details.raw pre")),
	)
	if err != nil {
		t.Fatalf("open the raw judge output: %v", err)
	}
	screenshot(t, ctx, "sample")
	if raw := textOf(t, ctx, card+"details.raw pre"); !strings.Contains(raw, weakReasoning) {
		t.Errorf("raw judge output %q lacks the reasoning", raw)
	}
	if got := textOf(t, ctx, "#sample-position"); !strings.HasSuffix(got, "1 of 1 in the filtered table") {
		t.Errorf("position %q", got)
	}

	err = chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#back-to-samples")), chromedp.WaitVisible(chromedp.CSS("#samples")))
	if err != nil {
		t.Fatalf("back to the table: %v", err)
	}
	if n := textOf(t, ctx, "#sample-count"); n != "1 of 10 rows match" {
		t.Errorf("back in the table: %q, want the filter kept", n)
	}
}
