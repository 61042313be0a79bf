package runner_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"assay/config"
	"assay/internal/pgtest"
	"assay/report"
	"assay/runner"
	"assay/runner/llm/llmtest"
	"assay/store"
	"assay/tally"
)

// fixture is a database, a fake model server and a manager wired to them.
type fixture struct {
	t   *testing.T
	db  *store.DB
	srv *llmtest.Server
	m   *runner.Manager
	dir string
}

func newFixture(t *testing.T, h llmtest.Handler, opts ...llmtest.Option) *fixture {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "assay.db")
	if pgtest.OnPostgres() {
		path = pgtest.DSN(t)
	}
	db, err := tally.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	srv := llmtest.New(h, opts...)
	m := runner.New(db, runner.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Sleep: func(ctx context.Context, d time.Duration) error { return ctx.Err() }})
	t.Cleanup(func() { m.Close(context.Background()); srv.Close(); db.Close() })
	return &fixture{t: t, db: db, srv: srv, m: m, dir: dir}
}

// manager is a manager of the fixture's database that reads the
// environment through getenv.
func (f *fixture) manager(getenv func(string) string) *runner.Manager {
	m := runner.New(f.db, runner.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Getenv: getenv,
		Sleep: func(ctx context.Context, d time.Duration) error { return ctx.Err() }})
	f.t.Cleanup(func() { m.Close(context.Background()) })
	return m
}

// qaDataset writes n question/answer samples.
func (f *fixture) qaDataset(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "{\"id\": \"q%d\", \"question\": \"What is %d + %d?\", \"answer\": \"%d\"}\n", i, i, i, 2*i)
	}
	path := filepath.Join(f.dir, "qa.jsonl")
	os.WriteFile(path, []byte(b.String()), 0o644)
	return path
}

// config parses a run file whose agent and judge are the fake server.
func (f *fixture) config(dataset, extra string) *config.Config {
	f.t.Helper()
	yaml := fmt.Sprintf(`name: test-run
dataset: {path: %q}
agent: {type: openai, model: agent-model, base_url: %q}
judge: {model: judge-model, base_url: %q}
conditions:
  baseline: {system_prompt: "Answer briefly."}
  careful: {system_prompt: "Think, then answer."}
execution: {num_repetitions: 3, max_concurrent: 4, retry: {max_attempts: 4}}
%s`, dataset, f.srv.URL, f.srv.URL, extra)
	cfg, err := config.Parse([]byte(yaml), "run.yaml", f.dir, func(string) string { return "" })
	if err != nil {
		f.t.Fatal(err)
	}
	return cfg
}

func (f *fixture) launch(cfg *config.Config) *store.Run {
	f.t.Helper()
	run, err := f.m.CreateFromConfig(context.Background(), cfg)
	if err != nil {
		f.t.Fatal(err)
	}
	return run
}

func rubricJudge() llmtest.Handler {
	return llmtest.JudgeAndAgent(llmtest.Judge(map[string]any{"factual_adherence": 4, "completeness": 5,
		"helpfulness_and_clarity": 3, "unverified_claims": []string{"a claim"}}), llmtest.Text("The answer is 4."))
}

func TestRunScoresEveryTaskOnce(t *testing.T) {
	f := newFixture(t, rubricJudge(), llmtest.WithLatency(2*time.Millisecond))
	run := f.launch(f.config(f.qaDataset(10), ""))
	status, err := f.m.Execute(context.Background(), run.ID)
	if err != nil || status != store.RunCompleted {
		t.Fatalf("status %s, err %v", status, err)
	}
	results, _ := f.db.Results(context.Background(), run.ID)
	if len(results) != 60 {
		t.Fatalf("want 60 results (10 samples × 2 conditions × 3 repetitions), got %d", len(results))
	}
	for _, r := range results {
		if r.Error != "" || len(r.Judgements) != 1 || len(r.Judgements[0].Scores) != 3 {
			t.Fatalf("result %+v should have one rubric judgement with 3 scores", r)
		}
		if len(r.Judgements[0].UnverifiedClaims) != 1 || r.Judgements[0].Raw == "" {
			t.Fatalf("judgement should keep claims and raw output: %+v", r.Judgements[0])
		}
	}
	s, err := report.Summarize(context.Background(), f.db, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if s.Results != 60 || len(s.Conditions) != 2 || len(s.Conditions[0].Metrics) != 3 {
		t.Fatalf("summary %+v", s)
	}
	m := s.Conditions[0].Metrics[0]
	if m.Name != "factual_adherence" || m.Mean != 4 || m.N != 30 || m.Samples != 10 || m.Std != 0 {
		t.Fatalf("metric %+v", m)
	}
	for _, req := range f.srv.Requests() {
		if _, _, judge := req.Schema(); judge && (req.Temperature == nil || *req.Temperature != 0 || req.Seed == nil) {
			t.Fatalf("judge requests must pin temperature 0 and a seed: %s", req.Body)
		}
	}
}

func TestRunSurvivesFaultsAndRecordsErrors(t *testing.T) {
	var answered atomic.Int64
	agent := func(req *llmtest.ChatRequest) llmtest.Reply {
		if strings.Contains(req.LastUser(), "What is 7 + 7") {
			return llmtest.Reply{Status: 400, Body: `{"error": {"message": "content policy"}}`}
		}
		if answered.Add(1) == 1 {
			// One fault sure to reach the agent: which requests the random
			// ones hit depends on how the calls interleave.
			return llmtest.Reply{Status: 503, Body: `{"error": {"message": "overloaded"}}`}
		}
		return llmtest.Reply{Content: "4"}
	}
	h := llmtest.JudgeAndAgent(llmtest.Judge(map[string]any{"factual_adherence": 2}), agent)
	f := newFixture(t, h, llmtest.WithFaults(0.1, 7))
	cfg := f.config(f.qaDataset(10), "")
	// One fault in ten: with 4 attempts about one run in a hundred met four in
	// a row on some task; with 8, none will.
	cfg.Execution.Retry.MaxAttempts = 8
	run := f.launch(cfg)
	status, err := f.m.Execute(context.Background(), run.ID)
	if err != nil || status != store.RunCompleted {
		t.Fatalf("status %s, err %v", status, err)
	}
	s, _ := report.Summarize(context.Background(), f.db, run.ID)
	if s.Results != 60 {
		t.Fatalf("every task needs a result despite faults, got %d", s.Results)
	}
	if s.Errors != 6 {
		t.Errorf("the poisoned sample fails once per condition and repetition: want 6 errors, got %d", s.Errors)
	}
	retried := 0
	for _, c := range s.Conditions {
		retried += c.Retried
		if c.Metrics[0].N+c.JudgeErrors != 27 {
			t.Errorf("%s: %d scores + %d judge errors, want 27 judged results", c.Name, c.Metrics[0].N, c.JudgeErrors)
		}
	}
	if retried == 0 || f.srv.Stats().Faults == nil {
		t.Errorf("retries should be visible: retried=%d faults=%v", retried, f.srv.Stats().Faults)
	}
	results, _ := f.db.Results(context.Background(), run.ID)
	for _, r := range results {
		if r.Error != "" && (len(r.Judgements) != 0 || !strings.Contains(r.Error, "400")) {
			t.Fatalf("an error is recorded with its message and no score: %+v", r)
		}
	}
}

func TestBudgetStopsNewWork(t *testing.T) {
	f := newFixture(t, rubricJudge())
	cfg := f.config(f.qaDataset(10), `budget_usd: 0.001
prices: {agent-model: {input_per_mtok: 10, output_per_mtok: 30}, judge-model: {input_per_mtok: 10, output_per_mtok: 30}}`)
	cfg.Execution.MaxConcurrent = 1
	run := f.launch(cfg)
	status, err := f.m.Execute(context.Background(), run.ID)
	if err != nil || status != store.RunBudgetExhausted {
		t.Fatalf("status %s, err %v", status, err)
	}
	s, _ := report.Summarize(context.Background(), f.db, run.ID)
	if s.Results == 0 || s.Results >= 60 || s.CostUSD < 0.001 {
		t.Fatalf("want some but not all results and the budget spent: %d results, $%f", s.Results, s.CostUSD)
	}
	got, _ := f.db.Run(context.Background(), run.ID)
	if !strings.Contains(got.Message, "budget") {
		t.Errorf("run message %q", got.Message)
	}
}

func TestCancelThenResumeFinishesEachTaskOnce(t *testing.T) {
	var calls atomic.Int64
	agent := func(req *llmtest.ChatRequest) llmtest.Reply {
		calls.Add(1)
		return llmtest.Reply{Content: "4"}
	}
	f := newFixture(t, llmtest.JudgeAndAgent(llmtest.Judge(nil), agent), llmtest.WithLatency(20*time.Millisecond))
	run := f.launch(f.config(f.qaDataset(10), ""))
	if err := f.m.Start(run.ID); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { n, _ := f.db.DoneTasks(context.Background(), run.ID); return len(n) >= 10 })
	if err := f.m.Cancel(context.Background(), run.ID); err != nil {
		t.Fatal(err)
	}
	got, _ := f.db.Run(context.Background(), run.ID)
	done, _ := f.db.DoneTasks(context.Background(), run.ID)
	if got.Status != store.RunCancelled || len(done) >= 60 {
		t.Fatalf("after cancel: status %s with %d results", got.Status, len(done))
	}
	if err := f.m.Resume(context.Background(), run.ID); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { r, _ := f.db.Run(context.Background(), run.ID); return r.Status == store.RunCompleted })
	results, _ := f.db.Results(context.Background(), run.ID)
	if len(results) != 60 {
		t.Fatalf("want 60 results after resume, got %d", len(results))
	}
	if calls.Load() > 60+4 {
		t.Errorf("finished tasks were redone: %d agent calls for 60 tasks", calls.Load())
	}
}

func TestJudgeSampleRateIsDeterministic(t *testing.T) {
	f := newFixture(t, rubricJudge())
	judgedSet := func() map[store.TaskKey]bool {
		run := f.launch(f.config(f.qaDataset(10), "judge_sample_rate: 0.5"))
		if _, err := f.m.Execute(context.Background(), run.ID); err != nil {
			t.Fatal(err)
		}
		results, _ := f.db.Results(context.Background(), run.ID)
		out := map[store.TaskKey]bool{}
		for _, r := range results {
			if len(r.Judgements) > 0 {
				out[store.TaskKey{SampleRow: r.SampleRow, Condition: r.Condition, Repetition: r.Repetition}] = true
			}
		}
		return out
	}
	a, b := judgedSet(), judgedSet()
	if len(a) < 15 || len(a) > 45 {
		t.Fatalf("about half of 60 results should be judged, got %d", len(a))
	}
	if len(a) != len(b) {
		t.Fatalf("the same tasks should be judged every time: %d vs %d", len(a), len(b))
	}
	for k := range a {
		if !b[k] {
			t.Fatalf("task %+v judged once but not the second time", k)
		}
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestChangesAfterParsingReachTheRun(t *testing.T) {
	f := newFixture(t, rubricJudge())
	cfg := f.config(f.qaDataset(2), "")
	cfg.Execution.NumRepetitions, cfg.JudgeSampleRate = 1, 0
	run := f.launch(cfg)
	if run.TotalTasks != 4 {
		t.Fatalf("2 samples × 2 conditions × 1 repetition: want 4 tasks, got %d", run.TotalTasks)
	}
	if _, err := f.m.Execute(context.Background(), run.ID); err != nil {
		t.Fatal(err)
	}
	results, _ := f.db.Results(context.Background(), run.ID)
	if len(results) != 4 || len(results[0].Judgements) != 0 {
		t.Fatalf("want 4 unjudged results, got %d (judgements %d)", len(results), len(results[0].Judgements))
	}
}

func TestConfidenceIntervalStaysOnTheScale(t *testing.T) {
	scores := []int{1, 5, 1}
	calls := 0
	judge := func(req *llmtest.ChatRequest) llmtest.Reply {
		v := scores[calls%3]
		calls++
		a, _ := llmtest.JudgeAnswer(req, map[string]any{"factual_adherence": v, "completeness": v, "helpfulness_and_clarity": v})
		return llmtest.Reply{Content: a}
	}
	f := newFixture(t, llmtest.JudgeAndAgent(judge, llmtest.Text("4")))
	cfg := f.config(f.qaDataset(3), "")
	cfg.Execution.NumRepetitions, cfg.Execution.MaxConcurrent = 1, 1
	run := f.launch(cfg)
	if _, err := f.m.Execute(context.Background(), run.ID); err != nil {
		t.Fatal(err)
	}
	s, _ := report.Summarize(context.Background(), f.db, run.ID)
	for _, c := range s.Conditions {
		for _, m := range c.Metrics {
			if m.CI95[0] < 1 || m.CI95[1] > 5 || m.CI95[0] > m.Mean || m.CI95[1] < m.Mean {
				t.Fatalf("%s %s: CI %v around mean %.2f must stay within 1–5", c.Name, m.Name, m.CI95, m.Mean)
			}
		}
	}
}

// A run cancelled the moment it starts, while it takes its lease or reads
// itself, ends cancelled, never left pending.
func TestARunCancelledAsItStartsIsCancelled(t *testing.T) {
	f := newFixture(t, rubricJudge())
	path := f.qaDataset(2)
	for i := range 30 {
		run := f.launch(f.config(path, ""))
		if err := f.m.Start(run.ID); err != nil {
			t.Fatal(err)
		}
		if err := f.m.Cancel(context.Background(), run.ID); err != nil {
			t.Fatal(err)
		}
		if got, _ := f.db.Run(context.Background(), run.ID); got.Status != store.RunCancelled && got.Status != store.RunCompleted {
			t.Fatalf("run %d (of %d) cancelled as it started is %s", i+1, 30, got.Status)
		}
	}
}
