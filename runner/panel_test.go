package runner_test

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"assay"
	"assay/config"
	"assay/report"
	"assay/runner"
	"assay/runner/llm/llmtest"
	"assay/store"
)

// panelJudge scores completeness 2 + (question mod 3) as the lenient
// judge, one less as the strict one: the two differ by exactly 1.
func panelJudge(req *llmtest.ChatRequest) llmtest.Reply {
	var q int
	for _, m := range req.Messages {
		if g := questionNumber.FindStringSubmatch(m.Content); g != nil {
			q, _ = strconv.Atoi(g[1])
		}
	}
	c := 2 + q%3
	if req.Model == "strict-model" {
		c--
	}
	answer, _ := llmtest.JudgeAnswer(req, map[string]any{"factual_adherence": 4, "completeness": c,
		"helpfulness_and_clarity": 3, "unverified_claims": []string{}})
	return llmtest.Reply{Content: answer}
}

func panelConfig(t *testing.T, f *fixture, mode string) *config.Config {
	t.Helper()
	yaml := fmt.Sprintf(`name: panel
dataset: {path: %q}
agent: {type: openai, model: agent-model, base_url: %q}
judges:
  - {name: strict, model: strict-model, base_url: %q}
  - {name: lenient, model: lenient-model, base_url: %q, seed: 7}
panel: %s
judge_repetitions: 2
conditions:
  baseline: {system_prompt: "Answer briefly."}
execution: {num_repetitions: 2, max_concurrent: 4}
`, f.qaDataset(6), f.srv.URL, f.srv.URL, f.srv.URL, mode)
	cfg, err := config.Parse([]byte(yaml), "run.yaml", f.dir, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// A two-judge panel: every answer is scored by both judges, each twice;
// each judgement keeps its judge; the report gives each judge's mean and
// offset from the panel, their agreement, and puts the spread between them
// in the judge's share; the headline combines them as the run says.
func TestAJudgePanel(t *testing.T) {
	for _, tc := range []struct {
		mode   string
		offset float64 // of the headline completeness from the lenient judge's
	}{{"mean", -0.5}, {"median", -0.5}, {"first", -1}} {
		f := newFixture(t, llmtest.JudgeAndAgent(panelJudge, llmtest.Text("An answer.")))
		cfg := panelConfig(t, f, tc.mode)
		if got := cfg.Panel(); len(got) != 2 || got[1].Seed != 7 || got[0].Seed != 42 || cfg.Judge.Name != "strict" {
			t.Fatalf("the panel as read: %+v", got)
		}
		run := f.launch(cfg)
		if status, err := f.m.Execute(context.Background(), run.ID); err != nil || status != store.RunCompleted {
			t.Fatalf("%s %v", status, err)
		}
		results, _ := f.db.Results(context.Background(), run.ID)
		for _, r := range results {
			var got []string
			for _, j := range r.Judgements {
				got = append(got, fmt.Sprintf("%s/%d/%d/%d", j.Judge, j.JudgeIndex, j.JudgeRepetition, *j.Seed))
			}
			if strings.Join(got, " ") != "strict/0/0/42 strict/0/1/42 lenient/1/0/7 lenient/1/1/7" {
				t.Fatalf("a result's judgements: %v", got)
			}
		}
		rep, err := report.Load(context.Background(), f.db, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		m := rep.Summary.Conditions[0].Metrics[rep.MetricIndex("rubric", "completeness")]
		if len(m.Judges) != 2 || m.Judges[0].Name != "strict" || math.Abs(m.Judges[0].Offset+0.5) > 1e-9 ||
			math.Abs(m.Judges[1].Offset-0.5) > 1e-9 || math.Abs(m.Judges[1].Mean-m.Judges[0].Mean-1) > 1e-9 {
			t.Errorf("%s: the judges %+v", tc.mode, m.Judges)
		}
		if m.JudgeAlpha == nil || *m.JudgeAlpha >= 1 {
			t.Errorf("%s: two judges a point apart cannot agree perfectly: alpha %v", tc.mode, m.JudgeAlpha)
		}
		// Within an answer: b−1, b−1, b, b — the spread between judges is the judge's.
		if v := m.Variance; v == nil || math.Abs(v.Judge-1.0/3) > 1e-9 || !v.JudgeMeasured {
			t.Errorf("%s: variance %+v", tc.mode, v)
		}
		if c := m.JudgeConsistency; c == nil || c.Exact != 1 {
			t.Errorf("%s: each judge agrees with itself: %+v", tc.mode, c)
		}
		if want := m.Judges[1].Mean + tc.offset; math.Abs(m.Mean-want) > 1e-9 {
			t.Errorf("%s: headline completeness %.3f, want %.3f", tc.mode, m.Mean, want)
		}
	}
}

// A panel judge's missing key is named where it is written.
func TestAPanelJudgesKeyIsChecked(t *testing.T) {
	f := newFixture(t, llmtest.Text("An answer."))
	cfg := panelConfig(t, f, "mean")
	cfg.Judges[1].APIKeyEnv = "LENIENT_KEY"
	unset := f.m.UnsetVariables(cfg, cfg.EvaluatorsFor(assay.KindQA), cfg.Conditions())
	if got, _ := runner.DescribeUnset(unset); !strings.Contains(got, "LENIENT_KEY") || !strings.Contains(got, "judges[1].api_key_env") {
		t.Errorf("unset: %q", got)
	}
}
