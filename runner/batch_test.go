package runner_test

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"testing"
	"time"

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
