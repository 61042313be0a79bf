package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"assay/report"
	"assay/runner/llm/llmtest"
	"assay/store"
	"assay/tally"
)

// A run's answers judged again by a stricter judge: the new run names its
// source, makes the judge calls alone — not one agent call — and its
// scores are the new judge's; the source is untouched. A judge file with
// a key that is not a judge's is refused, naming it, and stores nothing.
func TestRejudgeCallsTheJudgeAlone(t *testing.T) {
	var agentCalls, judgeCalls atomic.Int64
	srv := strictAndKindJudges(t, &agentCalls, &judgeCalls)
	dir := t.TempDir()
	var data strings.Builder
	for i := 1; i <= 5; i++ {
		fmt.Fprintf(&data, "{\"question\": \"What is %d + %d?\", \"answer\": \"%d\"}\n", i, i, 2*i)
	}
	os.WriteFile(filepath.Join(dir, "qa.jsonl"), []byte(data.String()), 0o644)
	os.WriteFile(filepath.Join(dir, "run.yaml"), fmt.Appendf(nil, `name: first
dataset: {path: ./qa.jsonl}
agent: {type: openai, model: agent-model, base_url: %q, api_key_env: REJUDGE_AGENT_KEY}
judge: {model: kind-judge, base_url: %q}
conditions: {plain: {}, brief: {system_prompt: "Be brief."}}
execution: {num_repetitions: 2, max_concurrent: 4}
`, srv.URL, srv.URL), 0o644)
	db := filepath.Join(dir, "assay.db")
	t.Setenv("REJUDGE_AGENT_KEY", "sk-agent")
	if err := run(context.Background(), []string{"run", "--config", filepath.Join(dir, "run.yaml"), "--db", db, "--quiet"}, io.Discard, io.Discard); err != nil {
		t.Fatalf("assay run: %v", err)
	}
	if agentCalls.Load() != 20 || judgeCalls.Load() != 20 {
		t.Fatalf("the first run made %d agent and %d judge calls, want 20 and 20", agentCalls.Load(), judgeCalls.Load())
	}
	// A person's review of an answer before it is judged again.
	d, err := tally.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	before, _ := d.Results(context.Background(), 1)
	review := func(r store.Result, value float64) {
		t.Helper()
		for _, j := range r.Judgements {
			for _, s := range j.Scores {
				if s.Metric == "completeness" {
					if err := d.SaveReview(context.Background(), &store.Review{RunID: 1, ScoreID: s.ID, Reviewer: "ann",
						Verdict: store.VerdictOverride, JudgeValue: s.Value, Value: value}); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
	}
	review(before[0], 2)
	// The agent's key is not needed: no agent is called.
	t.Setenv("REJUDGE_AGENT_KEY", "")
	agentCalls.Store(0)
	judgeCalls.Store(0)
	os.WriteFile(filepath.Join(dir, "bad.yaml"), fmt.Appendf(nil, "judge: {model: strict-judge, base_url: %q}\nexecution: {num_repetitions: 5}\n", srv.URL), 0o644)
	err = run(context.Background(), []string{"rejudge", "--run", "1", "--config", filepath.Join(dir, "bad.yaml"), "--db", db}, io.Discard, io.Discard)
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != exitBadUsage || !strings.Contains(err.Error(), "bad.yaml:2: execution: not a judge's key") {
		t.Fatalf("a judge file setting execution: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "strict.yaml"), fmt.Appendf(nil, "judge: {model: strict-judge, base_url: %q}\n", srv.URL), 0o644)
	var out bytes.Buffer
	if err := run(context.Background(), []string{"rejudge", "--run", "1", "--config", filepath.Join(dir, "strict.yaml"), "--db", db, "--estimate", "--json"}, &out, io.Discard); err != nil {
		t.Fatalf("assay rejudge --estimate: %v", err)
	}
	var est struct {
		JudgeCalls int `json:"judge_calls"`
		AgentCalls int `json:"agent_calls"`
	}
	if json.Unmarshal(out.Bytes(), &est); est.JudgeCalls != 20 || est.AgentCalls != 0 || judgeCalls.Load() != 0 {
		t.Errorf("the estimate: %s (%d judge calls made), want 20 judge calls and no agent call, none made", out.String(), judgeCalls.Load())
	}
	out.Reset()
	if err := run(context.Background(), []string{"rejudge", "--run", "1", "--config", filepath.Join(dir, "strict.yaml"), "--db", db, "--json"}, &out, io.Discard); err != nil {
		t.Fatalf("assay rejudge: %v\n%s", err, out.String())
	}
	if agentCalls.Load() != 0 || judgeCalls.Load() != 20 {
		t.Errorf("judging again made %d agent and %d judge calls, want 0 and 20", agentCalls.Load(), judgeCalls.Load())
	}
	var got struct {
		RunID        int64 `json:"run_id"`
		RejudgedFrom int64 `json:"rejudged_from"`
		Conditions   []struct {
			Name    string
			Results int
			Metrics []struct {
				Name string
				Mean float64
			}
		}
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if got.RunID != 2 || got.RejudgedFrom != 1 || len(got.Conditions) != 2 {
		t.Fatalf("assay rejudge --json: %s", out.String())
	}
	for _, c := range got.Conditions {
		if c.Results != 10 {
			t.Errorf("%s: %d results, want 10", c.Name, c.Results)
		}
		for _, m := range c.Metrics {
			if m.Name == "completeness" && m.Mean != 2 {
				t.Errorf("%s: completeness %v, want the strict judge's 2", c.Name, m.Mean)
			}
		}
	}
	after, _ := d.Results(context.Background(), 2)
	answers := map[[3]any]string{}
	for _, r := range before {
		answers[[3]any{r.SampleRow, r.Condition, r.Repetition}] = r.Response
		if s := scoreNamed(r, "completeness"); s != 4 {
			t.Errorf("the source run's score became %v", s)
		}
	}
	for _, r := range after {
		if answers[[3]any{r.SampleRow, r.Condition, r.Repetition}] != r.Response || r.Response == "" {
			t.Errorf("run 2's answer to %d/%s/%d is not run 1's", r.SampleRow, r.Condition, r.Repetition)
		}
	}
	// The review of run 1's answer counts for run 2's judge of it: the
	// strict judge's 2 agreed with; and one given after, an override of 2 by 1.
	carried := func() map[float64]string {
		t.Helper()
		got := map[float64]string{}
		list, err := d.ScoreReviews(context.Background(), 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range list {
			got[v.Value] = v.Verdict
		}
		return got
	}
	if got := carried(); len(got) != 1 || got[2] != store.VerdictAgree {
		t.Errorf("run 2's reviews %v, want ann's 2 carried from run 1 as agreeing with the strict judge", got)
	}
	review(before[1], 1)
	if got := carried(); len(got) != 2 || got[1] != store.VerdictOverride {
		t.Errorf("run 2's reviews %v, want ann's later 1 carried too, as an override", got)
	}
	// A verdict changed on run 1 changes on run 2; one withdrawn there is
	// withdrawn here.
	review(before[0], 3)
	if got := carried(); len(got) != 2 || got[3] != store.VerdictOverride || got[2] != "" {
		t.Errorf("run 2's reviews %v after ann changed her 2 to 3 on run 1", got)
	}
	if err := d.WithdrawReview(context.Background(), 1, completenessOf(before[1]).ID, "ann"); err != nil {
		t.Fatal(err)
	}
	if got := carried(); len(got) != 1 || got[3] == "" {
		t.Errorf("run 2's reviews %v after ann withdrew her 1 on run 1, want her 3 alone", got)
	}
	if ids, _ := d.RunIDs(context.Background()); len(ids) != 2 {
		t.Errorf("runs %v stored, want 2 (the refused judge file stores none)", ids)
	}
}

func scoreNamed(r store.Result, metric string) float64 {
	for _, j := range r.Judgements {
		for _, s := range j.Scores {
			if s.Metric == metric {
				return s.Value
			}
		}
	}
	return -1
}

// strictAndKindJudges is a fake model: an agent that answers "The answer
// is 4." and judges that score every metric 4, or 2 as strict-judge.
func strictAndKindJudges(t *testing.T, agentCalls, judgeCalls *atomic.Int64) *llmtest.Server {
	srv := llmtest.New(llmtest.JudgeAndAgent(func(req *llmtest.ChatRequest) llmtest.Reply {
		judgeCalls.Add(1)
		score := 4
		if req.Model == "strict-judge" {
			score = 2
		}
		return rubricScores(req, score)
	}, func(*llmtest.ChatRequest) llmtest.Reply {
		agentCalls.Add(1)
		return llmtest.Reply{Content: "The answer is 4."}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func completenessOf(r store.Result) store.Score {
	for _, j := range r.Judgements {
		for _, s := range j.Scores {
			if s.Metric == "completeness" {
				return s
			}
		}
	}
	return store.Score{}
}

// assay run's text says a mean corrected by reviews where there is one.
func TestTheSummarySaysTheCorrectedMean(t *testing.T) {
	var out bytes.Buffer
	printSummary(&out, &report.Summary{RunID: 3, Name: "again", Status: store.RunCompleted, Conditions: []report.ConditionSummary{{Name: "plain",
		Metrics: []report.MetricSummary{{Evaluator: "rubric", Name: "completeness", Mean: 3.6, Samples: 40, N: 40,
			PPI: &report.PPI{Mean: 3.1, CI95: [2]float64{2.9, 3.3}, Shift: -0.5, Reviewed: 12, Of: 40, Order: report.OrderRandom}}}}}})
	if want := "plain: rubric.completeness corrected by reviews 3.100 [2.900, 3.300], shift -0.500 (12 of 40 answers reviewed, random order)"; !strings.Contains(out.String(), want) {
		t.Errorf("the summary lacks %q:\n%s", want, out.String())
	}
}

// A run file and a judge file that take their servers from ${NAME}
// references: the answers are judged again though the agent's variable
// is no longer set (no agent is called), and the new run keeps the judge
// file's reference as written, not the address it stood for.
func TestRejudgeARunWhoseFilesReferToVariables(t *testing.T) {
	var agentCalls, judgeCalls atomic.Int64
	srv := strictAndKindJudges(t, &agentCalls, &judgeCalls)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "qa.jsonl"), []byte("{\"question\": \"What is 1 + 1?\", \"answer\": \"2\"}\n{\"question\": \"What is 2 + 2?\", \"answer\": \"4\"}\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "run.yaml"), []byte(`name: first
dataset: {path: ./qa.jsonl}
agent: {type: openai, model: agent-model, base_url: "${REJUDGE_AGENT_URL}"}
judge: {model: kind-judge, base_url: "${REJUDGE_JUDGE_URL:-http://127.0.0.1:9/v1}"}
conditions: {plain: {}}
execution: {num_repetitions: 1}
`), 0o644)
	db := filepath.Join(dir, "assay.db")
	t.Setenv("REJUDGE_AGENT_URL", srv.URL)
	t.Setenv("REJUDGE_JUDGE_URL", srv.URL)
	if err := run(context.Background(), []string{"run", "--config", filepath.Join(dir, "run.yaml"), "--db", db, "--quiet"}, io.Discard, io.Discard); err != nil {
		t.Fatalf("assay run: %v", err)
	}
	t.Setenv("REJUDGE_AGENT_URL", "")
	agentCalls.Store(0)
	judgeCalls.Store(0)
	os.WriteFile(filepath.Join(dir, "strict.yaml"), []byte("judge: {model: strict-judge, base_url: \"${REJUDGE_JUDGE_URL}\"}\n"), 0o644)
	var out bytes.Buffer
	if err := run(context.Background(), []string{"rejudge", "--run", "1", "--config", filepath.Join(dir, "strict.yaml"), "--db", db, "--json"}, &out, io.Discard); err != nil {
		t.Fatalf("assay rejudge: %v\n%s", err, out.String())
	}
	if agentCalls.Load() != 0 || judgeCalls.Load() != 2 {
		t.Errorf("judging again made %d agent and %d judge calls, want 0 and 2", agentCalls.Load(), judgeCalls.Load())
	}
	d, err := tally.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	again, err := d.Run(context.Background(), 2)
	if err != nil {
		t.Fatal(err)
	}
	if again.Config.Judge.BaseURL != "${REJUDGE_JUDGE_URL}" || again.Config.Agent.BaseURL != "${REJUDGE_AGENT_URL}" {
		t.Errorf("the run judging again keeps base_url %q (judge) and %q (agent), want the files' references", again.Config.Judge.BaseURL, again.Config.Agent.BaseURL)
	}
}
