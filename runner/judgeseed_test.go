package runner_test

import (
	"context"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"assay/report"
	"assay/runner/llm/llmtest"
	"assay/store"
)

// seededJudge scores completeness by the question's number (the samples
// differ) plus, when asked with an odd seed, one point (the judge's own
// noise). The seeds it was asked with are kept.
type seededJudge struct {
	mu    sync.Mutex
	seeds []int
}

var questionNumber = regexp.MustCompile(`What is (\d+) \+`)

func (j *seededJudge) handler(req *llmtest.ChatRequest) llmtest.Reply {
	seed := 0
	if req.Seed != nil {
		seed = *req.Seed
	}
	j.mu.Lock()
	j.seeds = append(j.seeds, seed)
	j.mu.Unlock()
	var q int
	for _, m := range req.Messages {
		if g := questionNumber.FindStringSubmatch(m.Content); g != nil {
			q, _ = strconv.Atoi(g[1])
		}
	}
	completeness := 1 + q%3 + seed%2
	answer, _ := llmtest.JudgeAnswer(req, map[string]any{"factual_adherence": 4, "completeness": completeness,
		"helpfulness_and_clarity": 3, "unverified_claims": []string{}})
	return llmtest.Reply{Content: answer}
}

// Judge repetitions ask with the pinned seed, so that they measure what
// pinning leaves (here nothing); with judge.vary_seed they ask with seed,
// seed+1, …, and the report finds the judge's part of the spread. Each
// judgement keeps its seed.
func TestJudgeRepetitionsAndVarySeed(t *testing.T) {
	for _, vary := range []bool{false, true} {
		j := &seededJudge{}
		f := newFixture(t, llmtest.JudgeAndAgent(j.handler, llmtest.Text("An answer.")))
		cfg := f.config(f.qaDataset(6), "judge_repetitions: 3\n")
		cfg.Execution.NumRepetitions = 2
		cfg.Judge.VarySeed = vary
		run := f.launch(cfg)
		if status, err := f.m.Execute(context.Background(), run.ID); err != nil || status != store.RunCompleted {
			t.Fatalf("%s %v", status, err)
		}
		results, _ := f.db.Results(context.Background(), run.ID)
		var stored []int
		for _, r := range results {
			for _, jg := range r.Judgements {
				stored = append(stored, *jg.Seed+100*jg.JudgeRepetition)
			}
		}
		slices.Sort(stored)
		stored = slices.Compact(stored)
		want := []int{42, 142, 242}
		if vary {
			want = []int{42, 143, 244}
		}
		if !slices.Equal(stored, want) {
			t.Errorf("vary_seed %v: seed + 100 × judge repetition stored %v, want %v", vary, stored, want)
		}
		slices.Sort(j.seeds)
		if got := slices.Compact(j.seeds); len(got) != len(want) && vary || !vary && !slices.Equal(got, []int{42}) {
			t.Errorf("vary_seed %v: the judge was asked with seeds %v", vary, got)
		}
		r, err := report.Load(context.Background(), f.db, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		i := r.MetricIndex("rubric", "completeness")
		m := r.Summary.Conditions[0].Metrics[i]
		v, c := m.Variance, m.JudgeConsistency
		if v == nil || c == nil || !v.JudgeMeasured || c.Answers != 12 {
			t.Fatalf("vary_seed %v: variance %+v, consistency %+v", vary, v, c)
		}
		if !vary && (v.Judge != 0 || c.Exact != 1 || c.MAD != 0 || v.Sample == 0) {
			t.Errorf("pinned: the judge should agree with itself: %+v %+v", v, c)
		}
		// Seeds 42, 43, 44 give 0, 1, 0 extra points: within an answer the
		// scores are x, x+1, x — variance 1/3 — and no answer agrees exactly.
		if vary && (v.Judge < 0.33 || v.Judge > 0.34 || c.Exact != 0 || c.MAD < 0.66 || c.MAD > 0.67) {
			t.Errorf("varied seeds: %+v %+v", v, c)
		}
		if s := v.Sentence("completeness"); vary && !strings.Contains(s, "samples") && !strings.Contains(s, "judge") {
			t.Errorf("sentence %q", s)
		}
	}
}
