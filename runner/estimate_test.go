package runner_test

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"assay"
	"assay/config"
	"assay/runner"
	"assay/store"
)

func estimateSamples(n int) []store.Sample {
	out := make([]store.Sample, n)
	for i := range out {
		out[i] = store.Sample{SampleID: fmt.Sprintf("q%d", i+1), Input: "What is the capital of France? Answer in a sentence.",
			Reference: "Paris is the capital of France.", Choices: []string{"Paris", "Lyon", "Nice", "Lille"}}
	}
	return out
}

func estimateConfig(edit func(*config.Config)) *config.Config {
	cfg := &config.Config{Agent: config.Agent{Model: "agent-model"}, Judge: config.Judge{Model: "judge-model"},
		Execution: config.Execution{NumRepetitions: 3}, JudgeSampleRate: 1, JudgeRepetitions: 1}
	if edit != nil {
		edit(cfg)
	}
	return cfg
}

func TestEstimateRunCountsCalls(t *testing.T) {
	two := []assay.Condition{{Name: "baseline"}, {Name: "careful", SystemPrompt: "Think, then answer."}}
	cases := []struct {
		name         string
		kind         assay.Kind
		samples      int
		edit         func(*config.Config)
		agent, judge int
	}{
		{"qa with the rubric", assay.KindQA, 3, nil, 18, 18},
		{"mcq is scored without a judge", assay.KindMCQ, 3, nil, 18, 0},
		{"rubric and arbiter, judged twice", assay.KindQA, 3, func(c *config.Config) {
			c.Evaluators = []config.Evaluator{config.EvalRubric, config.EvalArbiter}
			c.JudgeRepetitions = 2
		}, 18, 72},
		{"math with a rubric too", assay.KindMath, 2, func(c *config.Config) {
			c.Evaluators = []config.Evaluator{config.EvalNumericMatch, config.EvalRubric}
			c.Execution.NumRepetitions = 1
		}, 4, 4},
		{"no judge sample", assay.KindQA, 3, func(c *config.Config) { c.JudgeSampleRate = 0 }, 18, 0},
		{"a panel of three, judged twice each", assay.KindQA, 3, func(c *config.Config) {
			c.Judges = []config.Judge{{Name: "a", Model: "m1"}, {Name: "b", Model: "m2"}, {Name: "c", Model: "m3"}}
			c.JudgeRepetitions = 2
		}, 18, 108},
		{"no samples", assay.KindQA, 0, nil, 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := runner.EstimateRun(estimateConfig(tc.edit), tc.kind, estimateSamples(tc.samples), two, nil)
			if e.AgentCalls != tc.agent || e.JudgeCalls != tc.judge {
				t.Fatalf("agent %d judge %d calls, want %d and %d", e.AgentCalls, e.JudgeCalls, tc.agent, tc.judge)
			}
			if (e.AgentCalls > 0) != (e.TokensIn > 0 && e.TokensOut > 0) {
				t.Fatalf("tokens %d in, %d out for %d calls", e.TokensIn, e.TokensOut, e.AgentCalls)
			}
		})
	}
}

func TestEstimateRunJudgeSampleIsTheRunsChoice(t *testing.T) {
	cfg := estimateConfig(func(c *config.Config) { c.JudgeSampleRate = 0.5 })
	conds := []assay.Condition{{Name: "baseline"}}
	e := runner.EstimateRun(cfg, assay.KindQA, estimateSamples(100), conds, nil)
	if e.JudgeCalls < 100 || e.JudgeCalls > 200 {
		t.Fatalf("%d judge calls of 300 results at rate 0.5", e.JudgeCalls)
	}
	if again := runner.EstimateRun(cfg, assay.KindQA, estimateSamples(100), conds, nil); again.JudgeCalls != e.JudgeCalls {
		t.Fatalf("the judge sample changed: %d then %d", e.JudgeCalls, again.JudgeCalls)
	}
}

func TestEstimateRunCost(t *testing.T) {
	conds := []assay.Condition{{Name: "baseline"}}
	same := config.Price{InputPerMTok: 2, OutputPerMTok: 8}
	cases := []struct {
		name     string
		prices   map[string]config.Price
		unpriced []string
		free     bool
	}{
		{"both priced", map[string]config.Price{"agent-model": same, "judge-model": same}, nil, false},
		{"judge unpriced", map[string]config.Price{"agent-model": same}, []string{"judge-model"}, false},
		{"nothing priced", nil, []string{"agent-model", "judge-model"}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := runner.EstimateRun(estimateConfig(nil), assay.KindQA, estimateSamples(10), conds, tc.prices)
			if !slices.Equal(e.Unpriced, tc.unpriced) {
				t.Errorf("unpriced %v, want %v", e.Unpriced, tc.unpriced)
			}
			all := (float64(e.TokensIn)*same.InputPerMTok + float64(e.TokensOut)*same.OutputPerMTok) / 1e6
			switch {
			case tc.free && e.CostUSD != 0:
				t.Errorf("cost %v without prices", e.CostUSD)
			case len(tc.unpriced) == 0 && math.Abs(e.CostUSD-all) > 1e-12:
				t.Errorf("cost %v, want %v", e.CostUSD, all)
			case len(tc.unpriced) == 1 && (e.CostUSD <= 0 || e.CostUSD >= all):
				t.Errorf("cost %v should count the agent only (all: %v)", e.CostUSD, all)
			}
		})
	}
}

func TestEstimateRunTokensFollowTheInput(t *testing.T) {
	cfg := estimateConfig(nil)
	short := runner.EstimateRun(cfg, assay.KindQA, estimateSamples(1), []assay.Condition{{Name: "a"}}, nil)
	long := runner.EstimateRun(cfg, assay.KindQA, estimateSamples(1), []assay.Condition{{Name: "a", SystemPrompt: string(make([]byte, 4000))}}, nil)
	if d := long.TokensIn - short.TokensIn; d < 3*1000 || d > 3*1100 {
		t.Errorf("a 4000-character system prompt added %d input tokens over 3 calls, want about 3000", d)
	}
	capped := runner.EstimateRun(estimateConfig(func(c *config.Config) { c.Agent.MaxTokens = 10 }), assay.KindQA,
		estimateSamples(1), []assay.Condition{{Name: "a"}}, nil)
	if capped.TokensOut >= short.TokensOut {
		t.Errorf("max_tokens 10 should shorten the answer: %d vs %d tokens out", capped.TokensOut, short.TokensOut)
	}
}

// Judging answers already made costs the judge calls alone: the same judge
// calls and tokens as the whole run's, none of the agent's, and the agent
// unpriced is no matter.
func TestEstimateJudgingCountsTheJudgeAlone(t *testing.T) {
	conds := []assay.Condition{{Name: "baseline"}, {Name: "docs"}}
	same := config.Price{InputPerMTok: 2, OutputPerMTok: 8}
	whole := runner.EstimateRun(estimateConfig(nil), assay.KindQA, estimateSamples(10), conds, map[string]config.Price{"judge-model": same})
	judging := runner.EstimateJudging(estimateConfig(nil), assay.KindQA, func(yield func(*store.Sample) bool) {
		for _, s := range estimateSamples(10) {
			if !yield(&s) {
				return
			}
		}
	}, conds, map[string]config.Price{"judge-model": same})
	if judging.AgentCalls != 0 || judging.JudgeCalls != whole.JudgeCalls || judging.JudgeCalls == 0 {
		t.Errorf("judging again: %d agent and %d judge calls, want 0 and %d", judging.AgentCalls, judging.JudgeCalls, whole.JudgeCalls)
	}
	if math.Abs(judging.CostUSD-whole.CostUSD) > 1e-12 || judging.CostUSD <= 0 || len(judging.Unpriced) != 0 {
		t.Errorf("judging again costs %v (unpriced %v), want the judge's %v with nothing unpriced", judging.CostUSD, judging.Unpriced, whole.CostUSD)
	}
	if judging.TokensIn >= whole.TokensIn {
		t.Errorf("judging again reads %d tokens, the whole run %d: the agent's are left out", judging.TokensIn, whole.TokensIn)
	}
}
