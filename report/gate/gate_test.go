package gate

import (
	"strings"
	"testing"

	"assay"
	"assay/config"
	"assay/report"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Gate
	}{
		{"rubric.completeness>=4.0", Gate{Evaluator: "rubric", Metric: "completeness", Op: ">=", Threshold: 4}},
		{"exact_match>0.85", Gate{Metric: "exact_match", Op: ">", Threshold: 0.85}},
		{" rubric.completeness@ci_low >= 3.5 ", Gate{Evaluator: "rubric", Metric: "completeness", Bound: BoundCILow, Op: ">=", Threshold: 3.5}},
		{"with-docs:arbiter.overall@ci_high<0.2", Gate{Condition: "with-docs", Evaluator: "arbiter", Metric: "overall", Bound: BoundCIHigh, Op: "<", Threshold: 0.2}},
		{"numeric_match<=1e-1", Gate{Metric: "numeric_match", Op: "<=", Threshold: 0.1}},
		// An assertion's metric is named alone, spaces, quotes and dots included.
		{`contains "runbook.md">=0.9`, Gate{Metric: `contains "runbook.md"`, Op: ">=", Threshold: 0.9}},
		{`b:max_length 120 words@ci_low>=0.5`, Gate{Condition: "b", Metric: "max_length 120 words", Bound: BoundCILow, Op: ">=", Threshold: 0.5}},
		{`regex /v\d+.\d+/>=1`, Gate{Metric: `regex /v\d+.\d+/`, Op: ">=", Threshold: 1}},
		{"runbook.cites_runbook>=0.8", Gate{Evaluator: "runbook", Metric: "cites_runbook", Op: ">=", Threshold: 0.8}},
		{"agreement.rubric.completeness.kappa>=0.6", Gate{Evaluator: "rubric", Metric: "completeness", Op: ">=", Threshold: 0.6, Of: OfAgreement, Figure: "kappa"}},
		{"agreement.completeness.mae<=0.5", Gate{Metric: "completeness", Op: "<=", Threshold: 0.5, Of: OfAgreement, Figure: "mae"}},
		{"a:ppi.rubric.completeness.shift<=0.2", Gate{Condition: "a", Evaluator: "rubric", Metric: "completeness", Op: "<=", Threshold: 0.2, Of: OfPPI, Figure: "shift"}},
	} {
		g, err := Parse(tc.in)
		tc.want.Text = tc.in
		if err != nil || g != tc.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", tc.in, g, err, tc.want)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"rubric.completeness", "want METRIC>=NUMBER"},
		{"rubric.completeness>=high", `"high" is not a number`},
		{"rubric.completeness>=NaN", `"NaN" is not a number`},
		{"completeness@ci_mid>=1", "unknown bound @ci_mid"},
		{">=4", "no metric named"},
		{".completeness>=4", "want EVALUATOR.METRIC"},
		{"completeness=>4", "want METRIC>=NUMBER"},
		{"completeness==4", "want METRIC>=NUMBER"},
		{":completeness>=4", "no condition before ':'"},
		{"agreement.completeness>=0.6", "want agreement.METRIC.kappa or .mae"},
		{"ppi.completeness.mean<=0.2", "want ppi.METRIC.shift"},
		{"a:agreement.completeness.kappa>=0.6", "name no condition"},
	} {
		if _, err := Parse(tc.in); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) error = %v, want %q", tc.in, err, tc.want)
		}
	}
}

func TestCheckNamesTheMetrics(t *testing.T) {
	cfg := &config.Config{Evaluators: []config.Evaluator{config.EvalRubric, config.EvalArbiter, config.EvalExactMatch, config.JudgeWith("runbook")},
		Rubrics:    []config.Rubric{{Name: "runbook", Metrics: []config.RubricMetric{{Name: "cites_runbook", Scale: "pass"}}}},
		Assertions: []config.Assertion{{Kind: "contains", Name: `contains "runbook.md"`}}}
	for _, tc := range []struct{ gate, want string }{
		{"runbook.cites_runbook>=0.8", ""},
		{"cites_runbook>=0.8", ""},
		{`contains "runbook.md">=1`, ""},
		{`contains "runbook">=1`, `give no metric "contains \"runbook\""`},
		{"runbook.calm>=4", `give no metric "runbook.calm"`},
		{"completeness>=4", ""},
		{"rubric.completeness>=4", ""},
		{"exact_match>=0.9", ""},
		{"b:overall>=0.5", ""},
		{"rubric.overall>=4", `give no metric "rubric.overall" (they give rubric.factual_adherence`},
		{"c:exact_match>=1", `no condition "c" (it has a, b)`},
	} {
		g, err := Parse(tc.gate)
		if err != nil {
			t.Fatal(err)
		}
		err = Check([]Gate{g}, cfg, assay.KindQA, []string{"a", "b"})
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("Check(%s) = %v, want %q", tc.gate, err, tc.want)
		}
	}
}

func TestJudge(t *testing.T) {
	s := &report.Summary{Conditions: []report.ConditionSummary{
		{Name: "a", Results: 10, Metrics: []report.MetricSummary{{Evaluator: "exact_match", Name: "exact_match", Mean: 0.8, CI95: [2]float64{0.55, 1}, N: 10}}},
		{Name: "b", Results: 10, Errors: 10},
	}}
	gates := []Gate{must(Parse("exact_match>=0.8")), must(Parse("exact_match@ci_low>=0.6")), must(Parse("a:exact_match@ci_high<=1"))}
	got := Judge(gates, s, nil)
	want := []struct {
		cond string
		held bool
		msg  string
	}{
		{"a", true, "a: exact_match mean 0.8 is at least 0.8 (mean 0.8, 95% CI [0.55, 1], n 10)"},
		{"b", false, "b: no exact_match scores (10 results, 10 errors)"},
		{"a", false, "a: exact_match ci_low 0.55 is below 0.6"},
		{"b", false, "no exact_match scores"},
		{"a", true, "ci_high 1 is at most 1"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d results, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		if got[i].Condition != w.cond || got[i].Held != w.held || !strings.Contains(got[i].Message, w.msg) {
			t.Errorf("result %d = %+v, want %s held=%v %q", i, got[i], w.cond, w.held, w.msg)
		}
	}
	if Held(got) {
		t.Error("Held with failed gates")
	}
}

func must(g Gate, err error) Gate {
	if err != nil {
		panic(err)
	}
	return g
}

// Gates on the judge: its agreement with people, and how far their
// reviews move its mean.
func TestJudgeTheJudge(t *testing.T) {
	kappa := 0.55
	reviews := &report.Reviews{Agreement: []report.Agreement{{Evaluator: "rubric", Name: "completeness", Reviewed: 24, MAD: 0.4, Kappa: &kappa}}}
	s := &report.Summary{Conditions: []report.ConditionSummary{
		{Name: "a", Metrics: []report.MetricSummary{{Evaluator: "rubric", Name: "completeness", Mean: 3.6,
			PPI: &report.PPI{Mean: 3.1, Shift: -0.5, CI95: [2]float64{2.9, 3.3}, Reviewed: 60, Of: 1000}}}},
		{Name: "b", Metrics: []report.MetricSummary{{Evaluator: "rubric", Name: "completeness", Mean: 3.2}}},
	}}
	gates := []Gate{must(Parse("agreement.completeness.kappa>=0.6")), must(Parse("agreement.rubric.completeness.mae<=0.5")),
		must(Parse("ppi.completeness.shift<=0.2")), must(Parse("agreement.exact_match.kappa>=0.6"))}
	got := Judge(gates, s, reviews)
	want := []struct {
		cond string
		held bool
		msg  string
	}{
		{"", false, "rubric.completeness: the judge's kappa with people, 0.55, is below 0.6 (24 scores reviewed)"},
		{"", true, "mean absolute difference from people, 0.4, is at most 0.5"},
		{"a", false, "a: reviews move the judge's mean of rubric.completeness from 3.6 to 3.1 (95% CI [2.9, 3.3]), by 0.5, which is above 0.2 (60 of 1000 answers reviewed)"},
		{"b", false, "b: no mean of completeness corrected by reviews"},
		{"", false, "exact_match: nobody reviewed a score of it"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d results, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		if got[i].Condition != w.cond || got[i].Held != w.held || !strings.Contains(got[i].Message, w.msg) {
			t.Errorf("result %d = %+v, want %q held=%v %q", i, got[i], w.cond, w.held, w.msg)
		}
	}
	if r := Judge(gates[:1], s, nil); r[0].Held {
		t.Error("an agreement gate held on a run nobody reviewed")
	}
}
