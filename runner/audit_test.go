package runner_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"assay/config"
	"assay/runner/audit"
	"assay/runner/llm/llmtest"
	"assay/store"
)

// auditJudge is a fake judge: the rubric's scores 3, 3, 3, one point more
// for a padded answer when long is true; asked which of two answers is the
// better, the first when first is true, else the one that says "right".
func auditJudge(long, first bool, judged *atomic.Int64) llmtest.Handler {
	return func(req *llmtest.ChatRequest) llmtest.Reply {
		judged.Add(1)
		schema, _, _ := req.Schema()
		props, _ := schema["properties"].(map[string]any)
		user := req.Messages[len(req.Messages)-1].Content
		if _, pairwise := props["first_better"]; pairwise {
			better := 0
			if first || strings.Contains(user, "Answer 1:\nThe answer is right") {
				better = 1
			}
			answer, _ := llmtest.JudgeAnswer(req, map[string]any{"first_better": better})
			return llmtest.Reply{Content: answer}
		}
		score := 3
		if long && strings.Contains(user, strings.TrimSpace(audit.Padding)[:40]) {
			score++
		}
		answer, _ := llmtest.JudgeAnswer(req, map[string]any{"factual_adherence": score, "completeness": score,
			"helpfulness_and_clarity": score, "unverified_claims": []string{}})
		return llmtest.Reply{Content: answer}
	}
}

// auditAgent answers "right" under the careful condition, "4" under baseline.
func auditAgent(req *llmtest.ChatRequest) llmtest.Reply {
	if strings.Contains(req.Messages[0].Content, "Think") {
		return llmtest.Reply{Content: "The answer is right."}
	}
	return llmtest.Reply{Content: "The answer is 4."}
}

// A judge that scores padded answers a point higher is found out: a
// verbosity delta of 1 with an interval above 0; a fair one shows 0 with
// an interval holding it. A judge that always prefers the first of two
// answers flips with their order every time; one that prefers the better
// answer never does. The audit's calls are its estimate, and the run's own
// scores are left as they were.
func TestAuditFindsAJudgesBiases(t *testing.T) {
	for _, c := range []struct {
		name        string
		long, first bool
	}{{"biased", true, true}, {"fair", false, false}} {
		t.Run(c.name, func(t *testing.T) {
			var judged atomic.Int64
			f := newFixture(t, llmtest.JudgeAndAgent(auditJudge(c.long, c.first, &judged), auditAgent))
			r := f.launch(f.config(f.qaDataset(10), ""))
			if status, err := f.m.Execute(context.Background(), r.ID); err != nil || status != store.RunCompleted {
				t.Fatalf("run: %s %v", status, err)
			}
			before, _ := f.db.Results(context.Background(), r.ID)
			opts := audit.Options{Samples: 8, Probes: []string{audit.ProbeVerbosity, audit.ProbePosition}}
			est, err := f.m.AuditEstimate(context.Background(), r.ID, opts)
			if err != nil {
				t.Fatal(err)
			}
			judged.Store(0)
			res, err := f.m.Audit(context.Background(), r.ID, opts)
			if err != nil {
				t.Fatal(err)
			}
			if est.Calls != 8+2*8 || res.Calls != est.Calls || judged.Load() != int64(est.Calls) {
				t.Errorf("estimate %d calls, the audit counted %d, the fake judge answered %d; want 24 each", est.Calls, res.Calls, judged.Load())
			}
			v, p := res.Probes.Verbosity, res.Probes.Position
			if v == nil || p == nil || v.N != 8 || p.N != 8 {
				t.Fatalf("probes %+v %+v", v, p)
			}
			if c.long && (v.Delta <= 0.5 || v.CI95[0] <= 0) {
				t.Errorf("a judge favouring length: delta %.2f %v, want above 0.5 with its interval above 0", v.Delta, v.CI95)
			}
			if !c.long && (v.Delta != 0 || v.CI95[0] > 0 || v.CI95[1] < 0) {
				t.Errorf("a fair judge: delta %.2f %v, want 0 inside its interval", v.Delta, v.CI95)
			}
			if c.first && (p.FlipRate != 1 || p.FirstWins != 1) {
				t.Errorf("a judge favouring the first answer: flip rate %.2f, first wins %.2f; want 1 and 1", p.FlipRate, p.FirstWins)
			}
			if !c.first && (p.FlipRate != 0 || math.Abs(p.FirstWins-0.5) > 1e-9 || p.CI95[0] > 0.5 || p.CI95[1] < 0.5) {
				t.Errorf("a fair judge: flip rate %.2f, first wins %.2f %v; want 0 and 0.5 inside", p.FlipRate, p.FirstWins, p.CI95)
			}
			after, _ := f.db.Results(context.Background(), r.ID)
			if len(after) != len(before) {
				t.Fatalf("%d results after the audit, %d before", len(after), len(before))
			}
			for i := range before {
				for k := range before[i].Judgements {
					for s := range before[i].Judgements[k].Scores {
						if before[i].Judgements[k].Scores[s] != after[i].Judgements[k].Scores[s] {
							t.Fatalf("the audit changed the run's score %+v to %+v", before[i].Judgements[k].Scores[s], after[i].Judgements[k].Scores[s])
						}
					}
				}
			}
		})
	}
}

// With three conditions the position probe compares each with its
// neighbours (a with b, b with c, c with a), not only the first two.
func TestPositionProbeComparesEveryCondition(t *testing.T) {
	var judged atomic.Int64
	var mu sync.Mutex
	seen := map[string]bool{}
	judge := auditJudge(false, false, &judged)
	f := newFixture(t, llmtest.JudgeAndAgent(func(req *llmtest.ChatRequest) llmtest.Reply {
		user := req.Messages[len(req.Messages)-1].Content
		if i := strings.Index(user, "Answer 1:\n"); i >= 0 {
			j := strings.Index(user, "Answer 2:\n")
			mu.Lock()
			second, _, _ := strings.Cut(user[j+10:], "\n")
			seen[strings.TrimSpace(user[i+10:j])+" | "+strings.TrimSpace(second)] = true
			mu.Unlock()
		}
		return judge(req)
	}, func(req *llmtest.ChatRequest) llmtest.Reply {
		return llmtest.Reply{Content: "Said under " + strings.TrimSuffix(req.Messages[0].Content, ".")}
	}))
	yaml := fmt.Sprintf(`name: three
dataset: {path: %q}
agent: {type: openai, model: agent-model, base_url: %q}
judge: {model: judge-model, base_url: %q}
conditions: {a: {system_prompt: "A."}, b: {system_prompt: "B."}, c: {system_prompt: "C."}}
execution: {num_repetitions: 1}
`, f.qaDataset(9), f.srv.URL, f.srv.URL)
	cfg, err := config.Parse([]byte(yaml), "run.yaml", f.dir, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	r := f.launch(cfg)
	if status, err := f.m.Execute(context.Background(), r.ID); err != nil || status != store.RunCompleted {
		t.Fatalf("run: %s %v", status, err)
	}
	res, err := f.m.Audit(context.Background(), r.ID, audit.Options{Samples: 9, Probes: []string{audit.ProbePosition}})
	if err != nil || res.Probes.Position == nil || res.Probes.Position.N != 9 {
		t.Fatalf("audit: %+v %v", res, err)
	}
	for _, pair := range []string{"Said under A | Said under B", "Said under B | Said under C", "Said under C | Said under A"} {
		if !seen[pair] {
			t.Errorf("the pair %q was never compared: %v", pair, seen)
		}
	}
}

// Answers with filler sentences are shortened too: a judge that scores an
// answer saying "I hope this helps!" a point higher is found scoring the
// shortened ones a point lower; answers without filler are not judged again
// shortened, and the estimate counts exactly the calls made.
func TestAuditShortensAnswersWhereItCan(t *testing.T) {
	var judged atomic.Int64
	f := newFixture(t, llmtest.JudgeAndAgent(func(req *llmtest.ChatRequest) llmtest.Reply {
		judged.Add(1)
		score := 3
		if strings.Contains(req.Messages[len(req.Messages)-1].Content, "I hope this helps") {
			score = 4
		}
		answer, _ := llmtest.JudgeAnswer(req, map[string]any{"factual_adherence": score, "completeness": score,
			"helpfulness_and_clarity": score, "unverified_claims": []string{}})
		return llmtest.Reply{Content: answer}
	}, func(req *llmtest.ChatRequest) llmtest.Reply {
		if strings.Contains(req.Messages[0].Content, "Think") {
			return llmtest.Reply{Content: "The answer is 4. I hope this helps!"}
		}
		return llmtest.Reply{Content: "The answer is 4."}
	}))
	r := f.launch(f.config(f.qaDataset(10), ""))
	if status, err := f.m.Execute(context.Background(), r.ID); err != nil || status != store.RunCompleted {
		t.Fatalf("run: %s %v", status, err)
	}
	opts := audit.Options{Samples: 10, Probes: []string{audit.ProbeVerbosity}, Seed: 3}
	est, err := f.m.AuditEstimate(context.Background(), r.ID, opts)
	if err != nil {
		t.Fatal(err)
	}
	judged.Store(0)
	res, err := f.m.Audit(context.Background(), r.ID, opts)
	if err != nil {
		t.Fatal(err)
	}
	s := res.Probes.Verbosity.Shortened
	if s == nil || s.Of == 0 || s.Of == 10 || s.N != s.Of || s.Delta != -1 || s.CI95[1] >= 0 {
		t.Fatalf("shortened: %+v", s)
	}
	if est.Calls != 10+s.Of || res.Calls != est.Calls || judged.Load() != int64(est.Calls) {
		t.Errorf("estimate %d calls, audit %d, the fake judged %d; want 10 padded (one answer a sample) + %d shortened", est.Calls, res.Calls, judged.Load(), s.Of)
	}
}
