package runner_test

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"assay/internal/pgtest"
	"assay/report"
	"assay/runner"
	"assay/runner/llm"
	"assay/runner/llm/anthropictest"
	"assay/runner/llm/llmtest"
	"assay/store"
)

var batchQuestion = regexp.MustCompile(`What is (\d+) \+`)

// judgeByQuestion scores an answer by its question's number, so that
// every task has a score of its own; the batch lines of the questions in
// failing are answered 500, and answered when called live.
func judgeByQuestion(failing ...int) llmtest.Handler {
	return llmtest.JudgeAndAgent(func(req *llmtest.ChatRequest) llmtest.Reply {
		n := 0
		if m := batchQuestion.FindSubmatch(req.Body); m != nil {
			n, _ = strconv.Atoi(string(m[1]))
		}
		for _, f := range failing {
			if req.InBatch && f == n {
				return llmtest.Reply{Status: 500, Content: "the batch line failed"}
			}
		}
		answer, _ := llmtest.JudgeAnswer(req, map[string]any{"factual_adherence": 1 + n%5, "completeness": 1 + (n+2)%5,
			"helpfulness_and_clarity": 3, "unverified_claims": []string{}})
		return llmtest.Reply{Content: answer}
	}, llmtest.Text("The answer is 4."))
}

// scoresByTask are a run's scores by task and metric.
func scoresByTask(t *testing.T, db *store.DB, runID int64) map[string]float64 {
	t.Helper()
	results, err := db.Results(context.Background(), runID)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, r := range results {
		for _, j := range r.Judgements {
			for _, s := range j.Scores {
				out[fmt.Sprintf("%d/%s/%d/%s", r.SampleRow, r.Condition, r.Repetition, s.Metric)] = s.Value
			}
		}
	}
	return out
}

// A run whose judge calls go in batches scores every answer as the same
// judge called live does, at the batch price; a line the batch failed is
// called live, at the full price.
func TestBatchedJudgesScoreAsLiveOnes(t *testing.T) {
	prices := "prices: {judge-model: {input_per_mtok: 1000, output_per_mtok: 1000}}\n"
	live := newFixture(t, judgeByQuestion(), llmtest.WithLatency(time.Millisecond))
	liveRun := live.launch(live.config(live.qaDataset(6), prices))
	if status, err := live.m.Execute(context.Background(), liveRun.ID); err != nil || status != store.RunCompleted {
		t.Fatalf("live run: %s %v", status, err)
	}

	f := newFixture(t, judgeByQuestion(3), llmtest.WithLatency(time.Millisecond), llmtest.WithBatchPolls(3))
	run := f.launch(f.config(f.qaDataset(6), prices+"batch: {judge: true, gather: 30ms, poll: 5ms, size: 8}\n"))
	if status, err := f.m.Execute(context.Background(), run.ID); err != nil || status != store.RunCompleted {
		t.Fatalf("batched run: %s %v", status, err)
	}
	want, got := scoresByTask(t, live.db, liveRun.ID), scoresByTask(t, f.db, run.ID)
	if len(want) != 6*2*3*3 || len(got) != len(want) {
		t.Fatalf("scores: %d live, %d batched; want %d", len(want), len(got), 6*2*3*3)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: batched %v, live %v", k, got[k], v)
		}
	}

	st := f.srv.Stats()
	if st.BatchLines != 36 || st.Batches < 36/8 {
		t.Errorf("%d lines in %d batches; want the 36 judge calls, in batches of at most 8", st.BatchLines, st.Batches)
	}
	liveJudged := 0
	for _, req := range f.srv.Requests() {
		if _, _, judge := req.Schema(); judge {
			liveJudged++
		}
	}
	if liveJudged != 6 { // question 3's six tasks: their lines failed
		t.Errorf("%d judge calls went live; want the 6 whose batch line failed", liveJudged)
	}
	results, _ := f.db.Results(context.Background(), run.ID)
	liveResults, _ := live.db.Results(context.Background(), liveRun.ID)
	fullPrice := map[string]float64{}
	for _, r := range liveResults {
		fullPrice[fmt.Sprintf("%d/%s/%d", r.SampleRow, r.Condition, r.Repetition)] = r.Judgements[0].CostUSD
	}
	batched := 0
	for _, r := range results {
		j, full := r.Judgements[0], fullPrice[fmt.Sprintf("%d/%s/%d", r.SampleRow, r.Condition, r.Repetition)]
		switch {
		case full <= 0:
			t.Errorf("the live judgement of sample %d cost $%v", r.SampleRow, full)
		case j.BatchedCalls == 1 && math.Abs(j.CostUSD-full/2) < 1e-12:
			batched++
		case j.BatchedCalls == 0 && math.Abs(j.CostUSD-full) < 1e-12:
		default:
			t.Errorf("a judgement of %d batched calls cost $%v; live, $%v", j.BatchedCalls, j.CostUSD, full)
		}
	}
	if batched != 30 {
		t.Errorf("%d judgements at half price, want 30", batched)
	}
	kept, err := f.db.RunBatches(context.Background(), run.ID)
	if err != nil || len(kept) != st.Batches {
		t.Fatalf("%d batches kept, %d made: %v", len(kept), st.Batches, err)
	}
	lines := 0
	for _, b := range kept {
		lines += len(b.Lines)
		if b.Status != "completed" || b.EndedAt == nil {
			t.Errorf("batch %s kept as %s, ended %v", b.ProviderID, b.Status, b.EndedAt)
		}
	}
	if lines != 36 {
		t.Errorf("the kept batches hold %d lines, want 36", lines)
	}
}

// judgeCalls counts the judge calls a fake answered live.
func judgeCalls(srv *llmtest.Server) int {
	n := 0
	for _, req := range srv.Requests() {
		if _, _, judge := req.Schema(); judge {
			n++
		}
	}
	return n
}

// A run stopped while its batch is under way, and executed again by
// another manager (a process started after the first died), polls the
// batch it kept: no line is sent twice, and every answer is judged from it.
func TestAResumedRunPollsItsBatchAgain(t *testing.T) {
	f := newFixture(t, judgeByQuestion(), llmtest.WithLatency(time.Millisecond))
	f.srv.HoldBatches(true)
	run := f.launch(f.config(f.qaDataset(6), "batch: {judge: true, gather: 20ms, poll: 5ms}\n"))
	if status := stopWhen(t, f.m, run.ID, func() bool { return keptLines(f, run.ID) == 36 }); status != store.RunRunning {
		t.Fatalf("stopped while its batch was under way: %s, want it left running to resume", status)
	}
	if n, _ := f.db.DoneTasks(context.Background(), run.ID); len(n) != 0 {
		t.Fatalf("%d tasks done before the batch ended", len(n))
	}
	agentCalls, batches := f.srv.Stats().Requests, f.srv.Stats().Batches

	f.srv.HoldBatches(false)
	again := f.manager(func(string) string { return "" })
	if status, err := again.Execute(context.Background(), run.ID); err != nil || status != store.RunCompleted {
		t.Fatalf("resumed: %s %v", status, err)
	}
	st := f.srv.Stats()
	if st.Batches != batches || st.BatchLines != 36 {
		t.Errorf("%d batches of %d lines; want the %d batches kept, their 36 lines answered once", st.Batches, st.BatchLines, batches)
	}
	if st.Requests != agentCalls || judgeCalls(f.srv) != 0 {
		t.Errorf("resumed with %d calls more (%d judge calls live); want none: the answers were kept, the judgements in the batch",
			st.Requests-agentCalls, judgeCalls(f.srv))
	}
	results, _ := f.db.Results(context.Background(), run.ID)
	for _, r := range results {
		if len(r.Judgements) != 1 || r.Judgements[0].BatchedCalls != 1 || len(r.Judgements[0].Scores) != 3 {
			t.Fatalf("result %d/%s/%d: %+v", r.SampleRow, r.Condition, r.Repetition, r.Judgements)
		}
	}
	if len(results) != 36 {
		t.Errorf("%d results, want 36", len(results))
	}
}

// Cancelling a run cancels its batches at the provider.
func TestCancellingARunCancelsItsBatches(t *testing.T) {
	f := newFixture(t, judgeByQuestion(), llmtest.WithLatency(time.Millisecond))
	f.srv.HoldBatches(true)
	run := f.launch(f.config(f.qaDataset(6), "batch: {judge: true, gather: 20ms, poll: 5ms}\n"))
	if err := f.m.Start(run.ID); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return keptLines(f, run.ID) == 36 })
	if err := f.m.Cancel(context.Background(), run.ID); err != nil {
		t.Fatal(err)
	}
	kept, _ := f.db.RunBatches(context.Background(), run.ID)
	f.srv.HoldBatches(false)
	for _, b := range kept {
		if b.Status != "cancelling" {
			t.Errorf("batch %s kept as %s; want cancelling", b.ProviderID, b.Status)
		}
		if got, err := llmtestPoll(f, b.ProviderID); err != nil || got != "cancelled" {
			t.Errorf("the provider has the batch %s %s (%v); want cancelled", b.ProviderID, got, err)
		}
	}
}

// stopWhen executes a run until cond holds, then stops it as a process
// that dies or shuts down would, and returns the status it was left in.
func stopWhen(t *testing.T, m *runner.Manager, runID int64, cond func() bool) store.RunStatus {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan store.RunStatus)
	go func() {
		status, _ := m.Execute(ctx, runID)
		done <- status
	}()
	waitFor(t, cond)
	stop()
	return <-done
}

// keptLines counts the lines of a run's kept batches.
func keptLines(f *fixture, runID int64) int {
	kept, _ := f.db.RunBatches(context.Background(), runID)
	n := 0
	for _, b := range kept {
		n += len(b.Lines)
	}
	return n
}

// llmtestPoll asks the fake how a batch stands.
func llmtestPoll(f *fixture, id string) (string, error) {
	b, err := llm.New(llm.Config{BaseURL: f.srv.URL, Model: "judge-model"}, nil).PollBatch(context.Background(), id)
	if err != nil {
		return "", err
	}
	return b.Status, nil
}

// An Anthropic judge's calls go in message batches: each answer is scored
// from its batch (the request ids Anthropic takes, matched back to their
// tasks), an errored request is called live, and a resumed run polls the
// batch it kept.
func TestAnthropicJudgeInMessageBatches(t *testing.T) {
	judgeAnswer := func(n int) map[string]any {
		return map[string]any{"factual_adherence": 1 + n%5, "factual_adherence_reasoning": "r", "completeness": 1 + (n+2)%5,
			"completeness_reasoning": "r", "helpfulness_and_clarity": 3, "helpfulness_and_clarity_reasoning": "r", "unverified_claims": []string{}}
	}
	claude := anthropictest.New(func(req *anthropictest.Request) anthropictest.Reply {
		n := 0
		if m := batchQuestion.FindSubmatch(req.Body); m != nil {
			n, _ = strconv.Atoi(string(m[1]))
		}
		if req.InBatch && n == 2 {
			return anthropictest.Reply{Status: 500, Text: "overloaded"}
		}
		return anthropictest.Reply{ToolUses: []anthropictest.ToolUse{{Name: "answer", Input: judgeAnswer(n)}}}
	})
	t.Cleanup(claude.Close)
	claude.HoldBatches(true)
	f := newFixture(t, llmtest.Text("The answer is 4."), llmtest.WithLatency(time.Millisecond))
	cfg := f.config(f.qaDataset(5), "batch: {judge: true, gather: 20ms, poll: 5ms}\n")
	cfg.Judge.Type, cfg.Judge.BaseURL, cfg.Judge.Model, cfg.Judge.APIKeyEnv = "anthropic", claude.URL, "claude-sonnet-4-5", "CLAUDE_KEY"
	env := func(k string) string {
		if k == "CLAUDE_KEY" {
			return "sk-ant-test"
		}
		return ""
	}
	m := f.manager(env)
	run, err := m.CreateFromConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	stopWhen(t, m, run.ID, func() bool { return keptLines(f, run.ID) == 30 })
	batches := claude.Stats().Batches

	claude.HoldBatches(false)
	if status, err := f.manager(env).Execute(context.Background(), run.ID); err != nil || status != store.RunCompleted {
		t.Fatalf("resumed: %s %v", status, err)
	}
	st := claude.Stats()
	if st.Batches != batches || st.BatchLines != 30 || st.Requests != 6 {
		t.Errorf("%d batches (%d before the stop) of %d lines, %d requests live; want the same batches, 30 lines, question 2's 6 live",
			st.Batches, batches, st.BatchLines, st.Requests)
	}
	results, _ := f.db.Results(context.Background(), run.ID)
	samples, _ := f.db.Samples(context.Background(), run.DatasetID, 0, 0)
	number := map[int64]int{}
	for _, s := range samples {
		n, _ := strconv.Atoi(strings.TrimPrefix(s.SampleID, "q"))
		number[s.ID] = n
	}
	batched := 0
	for _, r := range results {
		j := r.Judgements[0]
		n := number[r.SampleRow]
		if len(j.Scores) != 3 || j.Scores[0].Value != float64(1+n%5) || j.Scores[1].Value != float64(1+(n+2)%5) {
			t.Errorf("question %d judged %+v", n, j.Scores)
		}
		batched += j.BatchedCalls
	}
	if len(results) != 30 || batched != 24 {
		t.Errorf("%d results, %d judged in batches; want 30 and 24", len(results), batched)
	}
	kept, _ := f.db.RunBatches(context.Background(), run.ID)
	for _, b := range kept {
		if b.Provider != "anthropic" || b.Status != "completed" || !strings.HasPrefix(b.ProviderID, "msgbatch_") {
			t.Errorf("kept %+v", b)
		}
	}
}

// With batch.agent the agent's calls go in batches too, under the
// conditions without MCP servers: every answer and its judgement come
// from batches, at the batch price, and a resumed run polls the batches it
// kept, the agent's and the judge's alike.
func TestTheAgentsCallsInBatches(t *testing.T) {
	prices := "prices: {agent-model: {input_per_mtok: 1000, output_per_mtok: 1000}, judge-model: {input_per_mtok: 1000, output_per_mtok: 1000}}\n"
	live := newFixture(t, judgeByQuestion(), llmtest.WithLatency(time.Millisecond))
	liveRun := live.launch(live.config(live.qaDataset(4), prices))
	if status, err := live.m.Execute(context.Background(), liveRun.ID); err != nil || status != store.RunCompleted {
		t.Fatalf("live run: %s %v", status, err)
	}

	f := newFixture(t, judgeByQuestion(), llmtest.WithLatency(time.Millisecond))
	f.srv.HoldBatches(true)
	run := f.launch(f.config(f.qaDataset(4), prices+"batch: {judge: true, agent: true, gather: 20ms, poll: 5ms}\n"))
	stopWhen(t, f.m, run.ID, func() bool { return keptLines(f, run.ID) == 24 }) // the agent's 24 calls, held
	if st := f.srv.Stats(); st.Requests != 0 {
		t.Fatalf("%d calls went live; want every agent call in a batch", st.Requests)
	}

	f.srv.HoldBatches(false)
	if status, err := f.manager(func(string) string { return "" }).Execute(context.Background(), run.ID); err != nil || status != store.RunCompleted {
		t.Fatalf("resumed: %s %v", status, err)
	}
	if st := f.srv.Stats(); st.Requests != 0 || st.BatchLines != 48 {
		t.Errorf("%d calls live, %d lines in batches; want none live, the 24 answers and 24 judgements in batches", st.Requests, st.BatchLines)
	}
	want, got := scoresByTask(t, live.db, liveRun.ID), scoresByTask(t, f.db, run.ID)
	if len(got) != len(want) || len(want) != 4*2*3*3 {
		t.Fatalf("%d scores batched, %d live", len(got), len(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: batched %v, live %v", k, got[k], v)
		}
	}
	liveCost := map[string]float64{}
	liveResults, _ := live.db.Results(context.Background(), liveRun.ID)
	for _, r := range liveResults {
		liveCost[fmt.Sprintf("%d/%s/%d", r.SampleRow, r.Condition, r.Repetition)] = r.CostUSD
	}
	results, _ := f.db.Results(context.Background(), run.ID)
	for _, r := range results {
		full := liveCost[fmt.Sprintf("%d/%s/%d", r.SampleRow, r.Condition, r.Repetition)]
		if r.BatchedCalls != 1 || r.Response != "The answer is 4." || full <= 0 || math.Abs(r.CostUSD-full/2) > 1e-12 {
			t.Errorf("answer %d/%s/%d: %d batched calls, %q, $%v (live $%v)", r.SampleRow, r.Condition, r.Repetition, r.BatchedCalls, r.Response, r.CostUSD, full)
		}
	}
	s, err := report.Summarize(context.Background(), f.db, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range s.Conditions {
		if c.BatchedCalls == nil || *c.BatchedCalls != 24 {
			t.Errorf("condition %s: %v batched calls, want 24 (12 answers, 12 judgements)", c.Name, c.BatchedCalls)
		}
	}
}

// A kept batch its provider no longer knows (another key, a batch
// deleted) is given up rather than polled for ever: its lines are called
// live and the run completes.
func TestABatchTheProviderRefusesIsCalledLive(t *testing.T) {
	f := newFixture(t, judgeByQuestion(), llmtest.WithLatency(time.Millisecond))
	f.srv.HoldBatches(true)
	run := f.launch(f.config(f.qaDataset(3), "batch: {judge: true, gather: 20ms, poll: 5ms}\n"))
	stopWhen(t, f.m, run.ID, func() bool { return keptLines(f, run.ID) == 18 })
	raw, err := pgtest.OpenRaw(f.db.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(`UPDATE run_batches SET provider_id = 'batch_gone' || id WHERE run_id = $1`, run.ID); err != nil {
		t.Fatal(err)
	}
	if status, err := f.manager(func(string) string { return "" }).Execute(context.Background(), run.ID); err != nil || status != store.RunCompleted {
		t.Fatalf("resumed: %s %v", status, err)
	}
	if n := judgeCalls(f.srv); n != 18 {
		t.Errorf("%d judge calls live, want the 18 lines of the batches refused", n)
	}
	kept, _ := f.db.RunBatches(context.Background(), run.ID)
	for _, b := range kept {
		if b.Status != "refused" || b.EndedAt == nil {
			t.Errorf("batch %s kept as %s", b.ProviderID, b.Status)
		}
	}
}

// A run paused while its calls are gathered, before their batch is sent,
// sends nothing after: the resumed run sends each line once.
func TestAPausedRunSendsNoGatheredLines(t *testing.T) {
	f := newFixture(t, judgeByQuestion(), llmtest.WithLatency(time.Millisecond))
	run := f.launch(f.config(f.qaDataset(6), "batch: {judge: true, gather: 150ms, poll: 5ms}\n"))
	stopWhen(t, f.m, run.ID, func() bool { n, _ := f.db.AnswersAwaiting(context.Background(), run.ID); return n == 36 })
	if status, err := f.manager(func(string) string { return "" }).Execute(context.Background(), run.ID); err != nil || status != store.RunCompleted {
		t.Fatalf("resumed: %s %v", status, err)
	}
	if st := f.srv.Stats(); st.BatchLines != 36 || keptLines(f, run.ID) != 36 {
		t.Errorf("%d lines answered in batches, %d kept; want each of the 36 once: the paused run's gathered lines were sent after it stopped",
			st.BatchLines, keptLines(f, run.ID))
	}
}

// A batch still under way after max_wait is cancelled, and its lines that
// it did not answer are called live: the run does not wait past it.
func TestABatchPastMaxWaitIsCancelledAndCalledLive(t *testing.T) {
	f := newFixture(t, judgeByQuestion(), llmtest.WithLatency(time.Millisecond))
	f.srv.HoldBatches(true)
	run := f.launch(f.config(f.qaDataset(3), "batch: {judge: true, gather: 20ms, poll: 5ms, max_wait: 100ms}\n"))
	if status, err := f.m.Execute(context.Background(), run.ID); err != nil || status != store.RunCompleted {
		t.Fatalf("%s %v", status, err)
	}
	if n := judgeCalls(f.srv); n != 18 {
		t.Errorf("%d judge calls live; want the 18 lines of the batches cancelled past max_wait", n)
	}
	kept, _ := f.db.RunBatches(context.Background(), run.ID)
	for _, b := range kept {
		if b.Status != "cancelled" || b.EndedAt == nil {
			t.Errorf("batch %s kept as %s", b.ProviderID, b.Status)
		}
		if got, _ := llmtestPoll(f, b.ProviderID); got != "cancelled" {
			t.Errorf("the provider has batch %s %s, want cancelled", b.ProviderID, got)
		}
	}
	if len(kept) == 0 {
		t.Error("no batch was sent")
	}
}
