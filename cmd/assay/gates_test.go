package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/joshdk/go-junit"

	"assay/runner/llm/llmtest"
	"assay/store"
	"assay/tally"
)

// gateBench is a dataset, a run file and a fake model whose judge gives
// every rubric metric the score it is set to.
type gateBench struct {
	dir, cfg, db string
	score        atomic.Int64
}

func newGateBench(t *testing.T, extra string) *gateBench {
	t.Helper()
	b := &gateBench{dir: t.TempDir()}
	b.score.Store(4)
	judge := func(req *llmtest.ChatRequest) llmtest.Reply {
		s := b.score.Load()
		answer, _ := llmtest.JudgeAnswer(req, map[string]any{"factual_adherence": s, "completeness": s,
			"helpfulness_and_clarity": s, "unverified_claims": []string{}})
		return llmtest.Reply{Content: answer}
	}
	agent := func(req *llmtest.ChatRequest) llmtest.Reply { return llmtest.Reply{Content: "An answer."} }
	srv := llmtest.New(llmtest.JudgeAndAgent(judge, agent))
	t.Cleanup(srv.Close)
	writeSums(b.dir, 8)
	cfg := fmt.Sprintf(`name: gated
dataset: {path: ./questions.jsonl}
agent: {type: openai, model: agent-model, base_url: %q}
judge: {model: judge-model, base_url: %q}
conditions:
  baseline: {system_prompt: "Answer briefly."}
  concise: {system_prompt: "Answer in one sentence."}
%s`, srv.URL, srv.URL, extra)
	b.cfg = filepath.Join(b.dir, "run.yaml")
	os.WriteFile(b.cfg, []byte(cfg), 0o644)
	b.db = filepath.Join(b.dir, "assay.db")
	return b
}

// run runs assay run with the bench's config and database, and returns its
// exit code, stdout and stderr.
func (b *gateBench) run(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	err := run(context.Background(), append([]string{"run", "--config", b.cfg, "--db", b.db}, args...), &out, &errOut)
	if err != nil {
		fmt.Fprintln(&errOut, "assay:", err)
	}
	return exitCodeOf(err), out.String(), errOut.String()
}

func exitCodeOf(err error) int {
	if err == nil {
		return 0
	}
	return exitCode(err)
}

func TestGatesHoldAndFail(t *testing.T) {
	b := newGateBench(t, "")
	junitPath := filepath.Join(b.dir, "junit.xml")
	mdPath := filepath.Join(b.dir, "summary.md")

	code, out, errOut := b.run("--gate", "rubric.completeness>=4.0", "--gate", "concise:helpfulness_and_clarity@ci_low>=3.5",
		"--json", "--junit", junitPath, "--summary-md", mdPath, "--report-url", "https://assay.example/")
	if code != 0 {
		t.Fatalf("exit %d, want 0 (every gate holds at 4.0):\n%s%s", code, out, errOut)
	}
	var got struct {
		RunID  int64 `json:"run_id"`
		Passed *bool `json:"passed"`
		Gates  []struct {
			Gate, Condition, Bound string
			Value                  float64
			Held                   bool
		} `json:"gates"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	if got.Passed == nil || !*got.Passed || len(got.Gates) != 3 {
		t.Fatalf("passed %v, gates %+v: want 3 gates held (two conditions, then one)", got.Passed, got.Gates)
	}
	if g := got.Gates[2]; g.Condition != "concise" || g.Bound != "ci_low" || g.Value != 4 || !g.Held {
		t.Errorf("the scoped gate = %+v", g)
	}
	suites, err := junit.IngestFile(junitPath)
	if err != nil {
		t.Fatalf("JUnit parser: %v", err)
	}
	if tests, failed := junitCount(suites); tests != 4 || failed != 0 {
		t.Errorf("JUnit: %d tests, %d failed; want 4 (run completed + 3 gates), 0 failed", tests, failed)
	}
	md, _ := os.ReadFile(mdPath)
	link := fmt.Sprintf("[report](https://assay.example/runs/%d)", got.RunID)
	if !strings.Contains(string(md), "✅ assay run") || !strings.Contains(string(md), link) ||
		!strings.Contains(string(md), "| ✅ | concise | `concise:helpfulness_and_clarity@ci_low>=3.5` | 4 | 24 |") {
		t.Errorf("markdown summary:\n%s", md)
	}

	b.score.Store(3)
	code, out, errOut = b.run("--gate", "rubric.completeness>=3.5", "--gate", "factual_adherence>=2", "--junit", junitPath, "--summary-md", mdPath)
	if code != 1 {
		t.Fatalf("exit %d, want 1 (completeness 3 < 3.5):\n%s%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "gate rubric.completeness>=3.5 failed under baseline") || !strings.Contains(out, "FAIL  rubric.completeness>=3.5") {
		t.Errorf("the failure is not named:\nstdout: %s\nstderr: %s", out, errOut)
	}
	suites, err = junit.IngestFile(junitPath)
	if err != nil {
		t.Fatal(err)
	}
	if tests, failed := junitCount(suites); tests != 5 || failed != 2 {
		t.Errorf("JUnit: %d tests, %d failed; want 5, 2", tests, failed)
	}
	var msg string
	for _, s := range suites {
		for _, tc := range s.Tests {
			if tc.Status == junit.StatusFailed {
				msg = tc.Error.Error()
			}
		}
	}
	if !strings.Contains(msg, "rubric.completeness mean 3 is below 3.5") {
		t.Errorf("a failure's message lacks the figures: %q", msg)
	}
	if md, _ := os.ReadFile(mdPath); !strings.Contains(string(md), "❌ assay run") || !strings.Contains(string(md), "2 gates failed") {
		t.Errorf("markdown summary:\n%s", md)
	}
}

func junitCount(suites []junit.Suite) (tests, failed int) {
	for _, s := range suites {
		tests += s.Totals.Tests
		failed += s.Totals.Failed
	}
	return tests, failed
}

func TestBaselineRegression(t *testing.T) {
	b := newGateBench(t, "")
	if code, out, errOut := b.run("--baseline-latest", "--gate-regressions"); code != 0 || !strings.Contains(out, "no baseline") {
		t.Fatalf("first run: exit %d, want 0 with a note that there is no baseline:\n%s%s", code, out, errOut)
	}
	first := lastRun(t, b.db)

	// Same quality: no regression.
	code, out, errOut := b.run("--baseline", fmt.Sprint(first), "--gate-regressions", "--json")
	if code != 0 {
		t.Fatalf("same scores: exit %d, want 0:\n%s%s", code, out, errOut)
	}
	var same struct {
		Baseline struct {
			BaselineRunID int64 `json:"baseline_run_id"`
			Regressions   int
			Metrics       []struct {
				Condition, Metric string
				Diff              float64
				N                 int
			}
		}
	}
	json.Unmarshal([]byte(out), &same)
	if same.Baseline.BaselineRunID != first || same.Baseline.Regressions != 0 || len(same.Baseline.Metrics) != 6 ||
		same.Baseline.Metrics[0].N != 8 || same.Baseline.Metrics[0].Diff != 0 {
		t.Fatalf("comparison = %+v, want 2 conditions × 3 metrics over 8 samples, no difference", same.Baseline)
	}

	// A drop of one point on every sample: a regression, whose CI [-1, -1]
	// lies below -0.5 too, but not below -1.5.
	b.score.Store(3)
	code, out, errOut = b.run("--baseline-latest", "--json")
	if code != 0 {
		t.Fatalf("without --gate-regressions a regression is reported, not failed: exit %d\n%s", code, errOut)
	}
	var reg struct {
		Passed   bool
		Baseline struct{ Regressions int }
	}
	json.Unmarshal([]byte(out), &reg)
	if reg.Baseline.Regressions != 6 || !reg.Passed {
		t.Errorf("regressions = %d, passed = %v; want 6, true", reg.Baseline.Regressions, reg.Passed)
	}
	junitPath := filepath.Join(b.dir, "junit.xml")
	code, out, errOut = b.run("--baseline", fmt.Sprint(first), "--gate-regressions", "--tolerance", "0.5", "--junit", junitPath)
	if code != 1 || !strings.Contains(errOut, "completeness regressed under concise against run") ||
		!strings.Contains(out, "baseline: rubric.completeness 4 → 3, diff -1, 95% CI [-1, -1], n 8 (0 better, 0 same, 8 worse): REGRESSED") {
		t.Errorf("exit %d, want 1 with the regression named:\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	suites, err := junit.IngestFile(junitPath)
	if err != nil {
		t.Fatal(err)
	}
	if tests, failed := junitCount(suites); tests != 7 || failed != 6 {
		t.Errorf("JUnit: %d tests, %d failed; want 7 (run + 6 metrics), 6 failed", tests, failed)
	}
	if code, _, errOut := b.run("--baseline", fmt.Sprint(first), "--gate-regressions", "--tolerance", "1.5"); code != 0 {
		t.Errorf("tolerance 1.5: exit %d, want 0\n%s", code, errOut)
	}
}

func TestRunExitCodes(t *testing.T) {
	b := newGateBench(t, "budget_usd: 0.000001\nprices: {agent-model: {input_per_mtok: 1000, output_per_mtok: 1000}, judge-model: {input_per_mtok: 1, output_per_mtok: 1}}\n")
	code, out, errOut := b.run("--gate", "rubric.completeness>=1", "--summary-md", filepath.Join(b.dir, "s.md"))
	if code != 2 || !strings.Contains(errOut, "ended budget_exhausted: ") {
		t.Errorf("a run stopped by its budget: exit %d, want 2 with the run's message:\n%s%s", code, out, errOut)
	}
	if md, _ := os.ReadFile(filepath.Join(b.dir, "s.md")); !strings.Contains(string(md), "did not complete (budget_exhausted") {
		t.Errorf("the summary hides that the run did not complete:\n%s", md)
	}
	runs := lastRun(t, b.db)

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--gate", "rubric.completenes>=4"}, `the run's evaluators give no metric "rubric.completenes"`},
		{[]string{"--gate", "completeness=>4"}, `want METRIC>=NUMBER`},
		{[]string{"--gate", "nosuch:completeness>=4"}, `the run has no condition "nosuch"`},
		{[]string{"--baseline", "999"}, `--baseline 999`},
		{[]string{"--baseline", fmt.Sprint(runs)}, `not completed`},
		{[]string{"--gate-regressions"}, `needs --baseline`},
		{[]string{"--junit", "/no/such/dir/j.xml"}, `no folder /no/such/dir`},
		{[]string{"--no-such-flag"}, `flag provided but not defined`},
	} {
		code, _, errOut := b.run(tc.args...)
		if code != 3 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, want 3 saying %q:\n%s", tc.args, code, tc.want, errOut)
		}
	}
	if id := lastRun(t, b.db); id != runs {
		t.Errorf("a bad invocation created run %d", id)
	}
	os.WriteFile(b.cfg, []byte("name: x\nagent: {type: openai, modle: m}\n"), 0o644)
	if code, _, errOut := b.run(); code != 3 || !strings.Contains(errOut, "modle") {
		t.Errorf("bad config: exit %d, want 3:\n%s", code, errOut)
	}
}

// --baseline-latest takes the latest completed run that ran its whole plan
// with these conditions, not a later one its stopping rule stopped after a
// few samples, and says which it took.
func TestBaselineLatestSkipsARunStoppedEarly(t *testing.T) {
	b := newGateBench(t, "")
	if code, out, errOut := b.run(); code != 0 {
		t.Fatalf("first run: exit %d\n%s%s", code, out, errOut)
	}
	whole := lastRun(t, b.db)
	if code, out, errOut := b.run(); code != 0 {
		t.Fatalf("second run: exit %d\n%s%s", code, out, errOut)
	}
	early := lastRun(t, b.db)
	db, err := tally.Open(context.Background(), b.db)
	if err != nil {
		t.Fatal(err)
	}
	err = db.SaveRunStop(context.Background(), early, store.RunStop{Samples: 3, DecidedAt: 3, OfSamples: 8, Reason: "every pair decided"})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	code, out, errOut := b.run("--baseline-latest", "--json")
	var got struct {
		Baseline struct {
			BaselineRunID int64 `json:"baseline_run_id"`
		}
		BaselineChosen string `json:"baseline_chosen"`
	}
	json.Unmarshal([]byte(out), &got)
	if code != 0 || got.Baseline.BaselineRunID != whole || !strings.Contains(got.BaselineChosen, fmt.Sprintf("run %d, the latest completed run", whole)) ||
		!strings.Contains(got.BaselineChosen, "ran its whole plan") {
		t.Errorf("exit %d: baseline %d (%q), want run %d, not %d which stopped early\n%s", code, got.Baseline.BaselineRunID, got.BaselineChosen, whole, early, errOut)
	}
	if _, text, _ := b.run("--baseline-latest"); !strings.Contains(text, "baseline: run ") || !strings.Contains(text, "ran its whole plan") {
		t.Errorf("assay run does not say which baseline it took:\n%s", text)
	}
}
