package report

import (
	"math"
	"testing"
	"time"

	"assay/store"
	"assay/tally"
)

// Three judges over six answers people scored: a and b make the same
// errors, c errors of its own, uncorrelated with theirs (Σ aᵢcᵢ = 0 and
// Σ cᵢ = 0). By hand: a and b err by +1/3 on average and 4/6 in absolute
// value, c by 0 and 4/6; their correlations are 1 (a, b) and 0 (a or b,
// c); the panel's mean errs by (1 + 1/3 + 1/3 + 2/3 + 2/3 + 1/3)/6 = 5/9,
// less than its best judge's 2/3; with r̄ = 1/3 the three are worth 1.8
// independent judges. Without c, the panel's mean is a's and b's errors, no
// better than either, and the two are worth one.
func TestJudgesThatErrTogetherGainNothingFromAPanel(t *testing.T) {
	human := []float64{3, 4, 2, 5, 3, 4}
	errA := []float64{1, 0, 1, -1, 1, 0}
	errC := []float64{1, 1, -1, 0, 0, -1}
	// The scores as stored: one condition, six samples, one answer each,
	// scored by three panel judges; people reviewed a's score of each.
	ms := tally.MetricScores{Condition: "plain", Evaluator: "rubric", Metric: "completeness", JudgeNames: []string{"a", "b", "c"}}
	last := map[int64]store.Review{}
	at := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	for s := range human {
		ms.Samples = append(ms.Samples, int64(s+1))
		ms.Starts = append(ms.Starts, int32(len(ms.Values)))
		for j, e := range []float64{errA[s], errA[s], errC[s]} {
			id := int64(10*s + j + 1)
			ms.IDs = append(ms.IDs, id)
			ms.Values = append(ms.Values, human[s]+e)
			ms.Reps = append(ms.Reps, 1)
			ms.Judges = append(ms.Judges, int8(j))
			ms.JudgeReps = append(ms.JudgeReps, 0)
			if j == 0 {
				last[id] = store.Review{ScoreID: id, Verdict: store.VerdictOverride, JudgeValue: human[s] + e, Value: human[s], At: at}
			}
		}
	}
	ms.Starts = append(ms.Starts, int32(len(ms.Values)))
	r := &Report{Metrics: []Metric{{Evaluator: "rubric", Name: "completeness"}}}
	got := r.judgeErrors([]tally.MetricScores{ms}, last)
	if len(got) != 1 {
		t.Fatalf("%d metrics compared, want 1", len(got))
	}
	e := got[0]
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-12 {
			t.Errorf("%s %v, want %v", what, got, want)
		}
	}
	if e.N != 6 {
		t.Errorf("n %d, want 6", e.N)
	}
	for j, want := range []float64{1.0 / 3, 1.0 / 3, 0} {
		near(e.Judges[j]+"'s mean error", e.MeanError[j], want)
		near(e.Judges[j]+"'s mean absolute error", e.MeanAbsError[j], 4.0/6)
	}
	for _, c := range []struct {
		i, j int
		want float64
	}{{0, 1, 1}, {1, 0, 1}, {0, 2, 0}, {1, 2, 0}, {2, 2, 1}} {
		if e.Matrix[c.i][c.j] == nil {
			t.Fatalf("no correlation of %s and %s", e.Judges[c.i], e.Judges[c.j])
		}
		near("correlation of "+e.Judges[c.i]+" and "+e.Judges[c.j], *e.Matrix[c.i][c.j], c.want)
	}
	near("the panel's mean absolute error", e.PanelAbsError, 5.0/9)
	// r̄ = (1 + 0 + 0)/3: three judges worth 3/(1 + 2/3) = 1.8.
	if e.MeanCorrelation == nil {
		t.Fatal("no mean correlation")
	}
	near("the mean correlation", *e.MeanCorrelation, 1.0/3)
	near("the effective judges", e.EffectiveJudges, 1.8)
	if e.BestJudge != "a" || !e.PanelBetter {
		t.Errorf("best judge %q (%v), panel better %v; want a, and the panel better", e.BestJudge, e.BestAbsError, e.PanelBetter)
	}
	var answers []panelAnswer
	for _, a := range reviewedAnswers(&ms, last) {
		answers = append(answers, panelAnswer{scores: a.scores[:2], human: a.human})
	}
	pair, ok := judgeErrorsOf(r.Metrics[0], []string{"a", "b"}, answers)
	if !ok {
		t.Fatal("two judges not compared")
	}
	near("a pair's panel error", pair.PanelAbsError, 4.0/6)
	if pair.PanelBetter {
		t.Error("two judges making the same errors: their mean is said to be better than either")
	}
	near("two judges erring alike: effective judges", pair.EffectiveJudges, 1)
	// Without reviews there is nothing to compare.
	if got := r.judgeErrors([]tally.MetricScores{ms}, nil); got != nil {
		t.Errorf("compared without reviews: %+v", got)
	}
}
