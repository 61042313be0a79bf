package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/chromedp/chromedp"

	"assay/runner/llm/llmtest"
)

type stopOutput struct {
	Results int `json:"results"`
	Stopped *struct {
		Reason       string  `json:"reason"`
		DecidedAfter int     `json:"decided_after"`
		AfterSamples int     `json:"after_samples"`
		OfSamples    int     `json:"of_samples"`
		CallsSaved   int     `json:"calls_saved"`
		AnswersSaved int     `json:"answers_saved"`
		CostSavedUSD float64 `json:"cost_saved_usd"`
	} `json:"stopped"`
	Stopping *struct {
		Samples int `json:"samples"`
		Stopped *struct {
			Extended bool `json:"extended"`
		} `json:"stopped"`
	} `json:"stopping"`
	Conditions []struct {
		Name    string `json:"name"`
		Metrics []struct {
			Name string      `json:"name"`
			Mean float64     `json:"mean"`
			CS95 *[2]float64 `json:"cs95"`
		} `json:"metrics"`
	} `json:"conditions"`
}

// A run with a stopping rule over two conditions that answer right 90% and
// 30% of the time stops once their difference is decided: after a random
// subset of whole samples, the better one ahead, with the calls it saved
// equal to those the fake server was spared; extended, it runs to its plan.
func TestARunStopsWhenTheAnswerIsKnown(t *testing.T) {
	const n, reps = 200, 2
	number := regexp.MustCompile(`What is (\d+) \+`)
	var calls atomic.Int64
	asked := make([]atomic.Int64, n+1)
	srv := llmtest.New(func(req *llmtest.ChatRequest) llmtest.Reply {
		calls.Add(1)
		i, _ := strconv.Atoi(number.FindStringSubmatch(req.Messages[len(req.Messages)-1].Content)[1])
		asked[i].Add(1)
		rate := 0.3
		if strings.Contains(req.Messages[0].Content, "careful") {
			rate = 0.9
		}
		h := fnv.New32a()
		fmt.Fprintf(h, "%d %v", i, rate)
		if float64(h.Sum32()%1000)/1000 < rate {
			return llmtest.Reply{Content: fmt.Sprintf("The answer is %d.", 2*i)}
		}
		return llmtest.Reply{Content: fmt.Sprintf("The answer is %d.", 2*i+1)}
	})
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	var data strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&data, "{\"question\": \"What is %d + %d?\", \"answer\": \"%d + %d = %d\\n#### %d\"}\n", i, i, i, i, 2*i, 2*i)
	}
	os.WriteFile(filepath.Join(dir, "sums.jsonl"), []byte(data.String()), 0o644)
	os.WriteFile(filepath.Join(dir, "run.yaml"), fmt.Appendf(nil, `name: stopping
dataset: {path: ./sums.jsonl}
agent: {type: openai, model: m, base_url: %q}
conditions: {careful: {system_prompt: "Be careful."}, hasty: {system_prompt: "Be quick."}}
evaluators: [numeric_match]
execution: {num_repetitions: %d, max_concurrent: 4}
stop: {when: decided, metric: numeric_match, alpha: 0.05, min_samples: 20, seed: 7}
`, srv.URL, reps), 0o644)
	db := filepath.Join(dir, "assay.db")
	var out bytes.Buffer
	if err := run(context.Background(), []string{"run", "--config", filepath.Join(dir, "run.yaml"), "--db", db, "--json", "--quiet"}, &out, io.Discard); err != nil {
		t.Fatalf("assay run: %v\n%s", err, out.String())
	}
	var got stopOutput
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	st := got.Stopped
	if st == nil {
		t.Fatalf("the run did not stop: %s", out.String())
	}
	t.Logf("stopped after %d of %d samples: %s; saved %d calls", st.AfterSamples, st.OfSamples, st.Reason, st.CallsSaved)
	if st.AfterSamples < 20 || st.AfterSamples >= n || st.OfSamples != n || !strings.Contains(st.Reason, "decided on numeric_match") ||
		strings.Contains(st.Reason, "samples") {
		t.Errorf("stopped: %+v", st)
	}
	// The run takes no sample once the rule holds: only those under way
	// finish (4 calls at once, 4 tasks a sample: at most 2 samples).
	if st.DecidedAfter < 20 || st.AfterSamples-st.DecidedAfter > 2 || st.AfterSamples < st.DecidedAfter {
		t.Errorf("the rule held after %d samples, the run did %d", st.DecidedAfter, st.AfterSamples)
	}
	// Whole samples: every sample asked was asked under both conditions,
	// every repetition; and not the file's first rows.
	var taken []int
	for i := 1; i <= n; i++ {
		if k := asked[i].Load(); k != 0 {
			if k != 2*reps {
				t.Errorf("sample %d asked %d times, want %d", i, k, 2*reps)
			}
			taken = append(taken, i)
		}
	}
	if len(taken) != st.AfterSamples || got.Results != st.AfterSamples*2*reps {
		t.Errorf("%d samples asked, %d results; the stop says %d samples", len(taken), got.Results, st.AfterSamples)
	}
	if taken[len(taken)-1] == len(taken) {
		t.Errorf("the samples taken are the file's first %d: not a random subset", len(taken))
	}
	// Saved: the plan's calls less those the server answered.
	if plan := int64(n * 2 * reps); int64(st.CallsSaved) != plan-calls.Load() || st.AnswersSaved != int(plan)-got.Results {
		t.Errorf("saved %d calls and %d answers; the server answered %d of the plan's %d", st.CallsSaved, st.AnswersSaved, calls.Load(), plan)
	}
	means := map[string]float64{}
	for _, c := range got.Conditions {
		for _, m := range c.Metrics {
			if m.Name != "numeric_match" {
				continue
			}
			means[c.Name] = m.Mean
			if m.CS95 == nil || m.CS95[0] > m.Mean || m.CS95[1] < m.Mean || m.CS95[1]-m.CS95[0] <= 0 {
				t.Errorf("%s: mean %v, cs95 %v", c.Name, m.Mean, m.CS95)
			}
		}
	}
	if means["careful"] <= means["hasty"] {
		t.Errorf("the wrong winner: %v", means)
	}

	// The report says so: why, what was saved, the anytime-valid intervals
	// beside the usual ones, the pair's verdict.
	id := lastRun(t, db)
	base, stopServer := serve(t, "--db", db)
	ctx := newBrowser(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(fmt.Sprintf("%s/runs/%d", base, id)), chromedp.WaitVisible(chromedp.CSS("#stopping-table"))); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "stopped-run")
	if got := textOf(t, ctx, "#stopped-early"); !strings.Contains(got, fmt.Sprintf("Stopped early: the rule held after %d of 200 samples", st.DecidedAfter)) ||
		!strings.Contains(got, fmt.Sprintf("%d were done when it stopped", st.AfterSamples)) {
		t.Errorf("the report says %q", got)
	}
	if got := textOf(t, ctx, "#stop-saved"); !strings.Contains(got, fmt.Sprintf("%d model calls", st.CallsSaved)) {
		t.Errorf("saved: %q", got)
	}
	table := textOf(t, ctx, "#stopping-table")
	for _, want := range []string{"careful", "hasty", "careful − hasty", "careful ahead", fmt.Sprintf("%.3f", means["careful"])} {
		if !strings.Contains(table, want) {
			t.Errorf("the table lacks %q: %s", want, table)
		}
	}
	stopServer()
	// The offline file says the same.
	var html bytes.Buffer
	if err := run(context.Background(), []string{"export", "--run", fmt.Sprint(id), "--format", "html", "--db", db, "-o", "-"}, &html, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(html.String(), `id="stopping-table"`) || !strings.Contains(html.String(), fmt.Sprintf("Stopped early: the rule held after %d of 200 samples", st.DecidedAfter)) {
		t.Error("the HTML export lacks the stopping rule's section")
	}

	// assay run's text says what the rule did.
	var text bytes.Buffer
	if err := run(context.Background(), []string{"run", "--resume", fmt.Sprint(id), "--db", db}, &text, io.Discard); err != nil {
		t.Fatalf("assay run --resume of a stopped run: %v", err)
	}
	if !strings.Contains(text.String(), fmt.Sprintf("stop: the rule held after %d of 200 samples", st.DecidedAfter)) {
		t.Errorf("assay run says nothing right of its rule:\n%s", text.String())
	}

	// Extended: on toward the plan, and then not stopped.
	out.Reset()
	if err := run(context.Background(), []string{"run", "--resume", fmt.Sprint(id), "--extend", "--db", db, "--json", "--quiet"}, &out, io.Discard); err != nil {
		t.Fatalf("assay run --extend: %v", err)
	}
	got = stopOutput{}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Stopped != nil || got.Results != n*2*reps || got.Stopping == nil || got.Stopping.Stopped == nil || !got.Stopping.Stopped.Extended {
		t.Errorf("extended: %d results, stopped %+v", got.Results, got.Stopped)
	}
	if calls.Load() != n*2*reps {
		t.Errorf("the server answered %d calls over both, want the plan's %d", calls.Load(), n*2*reps)
	}
	text.Reset()
	if err := run(context.Background(), []string{"run", "--resume", fmt.Sprint(id), "--db", db}, &text, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "stop: stopped early once") {
		t.Errorf("an extended run's text: %s", text.String())
	}
	err := run(context.Background(), []string{"run", "--resume", fmt.Sprint(id), "--extend", "--db", db, "--quiet"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "did not stop early") {
		t.Errorf("extending a run that ran its plan: %v", err)
	}
}

// A run whose rule never holds runs its whole plan, and says so: in assay
// run's text and on its report.
func TestARunWhoseRuleNeverHoldsSaysSo(t *testing.T) {
	srv := llmtest.New(llmtest.Text("The answer is 4."))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	var data strings.Builder
	for i := 1; i <= 12; i++ {
		fmt.Fprintf(&data, "{\"question\": \"What is 2 + 2 (%d)?\", \"answer\": \"#### 4\"}\n", i)
	}
	os.WriteFile(filepath.Join(dir, "sums.jsonl"), []byte(data.String()), 0o644)
	os.WriteFile(filepath.Join(dir, "run.yaml"), fmt.Appendf(nil, `name: undecided
dataset: {path: ./sums.jsonl}
agent: {type: openai, model: m, base_url: %q}
conditions: {a: {system_prompt: "A."}, b: {system_prompt: "B."}}
evaluators: [numeric_match]
stop: {when: decided, metric: numeric_match, min_samples: 10}
`, srv.URL), 0o644)
	db := filepath.Join(dir, "assay.db")
	var out bytes.Buffer
	if err := run(context.Background(), []string{"run", "--config", filepath.Join(dir, "run.yaml"), "--db", db}, &out, io.Discard); err != nil {
		t.Fatalf("assay run: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "stop: the rule was not met (stop once every pair of conditions is decided on numeric_match") ||
		!strings.Contains(out.String(), "the run ran its whole plan") {
		t.Errorf("assay run says nothing of its rule:\n%s", out.String())
	}
	var page bytes.Buffer
	if err := run(context.Background(), []string{"export", "--run", fmt.Sprint(lastRun(t, db)), "--format", "html", "--db", db, "-o", "-"}, &page, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), `id="stop-not-met"`) || !strings.Contains(page.String(), "Ran its whole plan of 12 samples") {
		t.Error("the report does not say the rule was not met")
	}
}
