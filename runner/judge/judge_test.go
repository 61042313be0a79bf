package judge

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"assay/config"
	"assay/runner/llm"
	"assay/runner/llm/llmtest"
)

// judgeClient is a client of srv pinned as a judge: temperature 0, seed 7,
// backoff without waiting.
func judgeClient(srv *llmtest.Server) *llm.Client {
	zero, seed := 0.0, 7
	cfg := llm.Config{BaseURL: srv.URL, Model: "judge-model", Temperature: &zero, Seed: &seed}
	cfg.Retry.Sleep = func(ctx context.Context, _ time.Duration) error { return ctx.Err() }
	return llm.New(cfg, nil)
}

// rubricAnswer is a rubric answer as JSON with the given scores.
func rubricAnswer(fa, c, h any, claims ...string) string {
	if claims == nil {
		claims = []string{}
	}
	b, _ := json.Marshal(map[string]any{
		"factual_adherence": fa, "factual_adherence_reasoning": "agrees with the golden answer",
		"completeness": c, "completeness_reasoning": "misses the second point",
		"helpfulness_and_clarity": h, "helpfulness_and_clarity_reasoning": "direct",
		"unverified_claims": claims,
	})
	return string(b)
}

var sample = Input{Question: "What is 2+2?", Reference: "4", Response: "2+2 is 4, as Peano showed."}

func TestRubricJudge(t *testing.T) {
	valid := llmtest.Reply{Content: rubricAnswer(5, 4.0, 3, "Peano showed it"), PromptTokens: 100, CompletionTokens: 20}
	tests := []struct {
		name       string
		replies    []llmtest.Reply
		opts       []llmtest.Option
		wantErr    string // substring of the error; "" for success
		attempts   int
		structured bool
	}{
		{name: "valid structured answer", replies: []llmtest.Reply{valid}, attempts: 1, structured: true},
		{name: "out of range retried, then valid", replies: []llmtest.Reply{{Content: rubricAnswer(5, 7, 3)}, valid},
			attempts: 2, structured: true},
		{name: "fenced and surrounded by prose", replies: []llmtest.Reply{{Content: "Sure. Format: {\"a\": 1}\n```json\n" +
			rubricAnswer(5, 4, 3, "Peano showed it") + "\n```\nHope this helps {really}."}}, attempts: 1, structured: true},
		{name: "always invalid", replies: []llmtest.Reply{{Content: rubricAnswer(5, 7, 3)}},
			wantErr: "judge answer invalid after 3 attempts: completeness: 7 is outside 1–5", attempts: 3, structured: true},
		{name: "half points are not integers", replies: []llmtest.Reply{{Content: rubricAnswer(4.5, 4, "3")}},
			wantErr: `factual_adherence: 4.5 is not an integer; helpfulness_and_clarity: "3" is not a number`, attempts: 3, structured: true},
		{name: "not JSON at all", replies: []llmtest.Reply{{Content: "The response is good."}},
			wantErr: "no JSON object in the answer", attempts: 3, structured: true},
		{name: "fallback when json_schema is rejected", opts: []llmtest.Option{llmtest.WithoutStructuredOutput()},
			replies: []llmtest.Reply{valid}, attempts: 2, structured: false},
		{name: "other errors are not a fallback", replies: []llmtest.Reply{{Status: 401, Content: "bad key"}},
			wantErr: "judge: llm: status 401: bad key", attempts: 1, structured: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.New(llmtest.Script(tt.replies...), tt.opts...)
			defer srv.Close()
			v, err := (&Rubric{Client: judgeClient(srv)}).Judge(context.Background(), sample)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
			} else if err != nil {
				t.Fatalf("Judge: %v", err)
			}
			if v.Attempts != tt.attempts || v.Structured != tt.structured {
				t.Errorf("attempts %d structured %v, want %d %v", v.Attempts, v.Structured, tt.attempts, tt.structured)
			}
			if err == nil {
				checkRubricJudgement(t, v)
			} else if errors.Is(err, ErrInvalidAnswer) && v.Raw != tt.replies[len(tt.replies)-1].Content {
				t.Errorf("raw %q, want the last answer", v.Raw)
			}
		})
	}
}

// checkRubricJudgement checks the metrics of a valid rubric answer of 5, 4, 3.
func checkRubricJudgement(t *testing.T, v *Judgement) {
	t.Helper()
	want := map[string]float64{"factual_adherence": 5, "completeness": 4, "helpfulness_and_clarity": 3}
	if len(v.Metrics) != len(want) {
		t.Fatalf("metrics %+v", v.Metrics)
	}
	for _, m := range v.Metrics {
		if m.Value != want[m.Name] || m.Reasoning == "" {
			t.Errorf("metric %+v, want value %v with reasoning", m, want[m.Name])
		}
	}
	if len(v.UnverifiedClaims) != 1 || v.UnverifiedClaims[0] != "Peano showed it" {
		t.Errorf("unverified claims %q", v.UnverifiedClaims)
	}
	if v.TokensIn <= 0 || v.TokensOut <= 0 || v.Raw == "" {
		t.Errorf("tokens %d/%d raw %q", v.TokensIn, v.TokensOut, v.Raw)
	}
}

func TestRetryTellsTheJudgeWhatWasWrong(t *testing.T) {
	srv := llmtest.New(llmtest.Script(
		llmtest.Reply{Content: rubricAnswer(5, 7, 3), PromptTokens: 100, CompletionTokens: 10},
		llmtest.Reply{Content: rubricAnswer(5, 4, 3, "Peano showed it"), PromptTokens: 150, CompletionTokens: 20}))
	defer srv.Close()
	v, err := (&Rubric{Client: judgeClient(srv)}).Judge(context.Background(), sample)
	if err != nil {
		t.Fatalf("Judge: %v", err)
	}
	if v.TokensIn != 250 || v.TokensOut != 30 {
		t.Errorf("tokens %d/%d, want the sum 250/30", v.TokensIn, v.TokensOut)
	}
	second := srv.Requests()[1]
	last := second.Messages[len(second.Messages)-1]
	if len(second.Messages) != 4 || !strings.Contains(last.Content, "completeness: 7 is outside 1–5") {
		t.Errorf("retry conversation %+v", second.Messages)
	}
}

func TestArbiterOverallIsMean(t *testing.T) {
	srv := llmtest.New(llmtest.Judge(map[string]any{"semantic": 0.5, "factuality": 1}))
	defer srv.Close()
	v, err := (&Arbiter{Client: judgeClient(srv)}).Judge(context.Background(), sample)
	if err != nil {
		t.Fatalf("Judge: %v", err)
	}
	want := []Metric{{Name: "semantic", Value: 0.5}, {Name: "factuality", Value: 1}, {Name: "overall", Value: 0.75}}
	if len(v.Metrics) != len(want) {
		t.Fatalf("metrics %+v", v.Metrics)
	}
	for i, w := range want {
		if v.Metrics[i].Name != w.Name || v.Metrics[i].Value != w.Value || v.Metrics[i].Reasoning == "" {
			t.Errorf("metric %d = %+v, want %s %v with reasoning", i, v.Metrics[i], w.Name, w.Value)
		}
	}
}

func TestArbiterRejectsOutOfRange(t *testing.T) {
	srv := llmtest.New(llmtest.Judge(map[string]any{"semantic": 1.5}))
	defer srv.Close()
	_, err := (&Arbiter{Client: judgeClient(srv), MaxAttempts: 2}).Judge(context.Background(), sample)
	if !errors.Is(err, ErrInvalidAnswer) || !strings.Contains(err.Error(), "after 2 attempts: semantic: 1.5 is outside 0–1") {
		t.Errorf("err = %v", err)
	}
}

// The metrics each judge gives are the ones, in the order, that reports
// show for its evaluator.
func TestJudgesGiveTheirEvaluatorsMetrics(t *testing.T) {
	for ev, f := range map[config.Evaluator]*form{config.EvalRubric: &rubricForm, config.EvalArbiter: &arbiterForm} {
		var names []string
		for _, fd := range f.fields {
			if fd.kind == score {
				names = append(names, fd.name)
			}
		}
		if f.derive != nil {
			for _, m := range f.derive(nil) {
				names = append(names, m.Name)
			}
		}
		if !slices.Equal(names, ev.Metrics()) {
			t.Errorf("%s gives %v, its evaluator lists %v", ev, names, ev.Metrics())
		}
	}
}
