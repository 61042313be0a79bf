package report_test

import (
	"context"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"assay"
	"assay/config"
	"assay/report"
	"assay/store"
	"assay/tally"
)

// judgedRun stores a run of n samples, one condition, one answer each,
// judged on completeness (1–5) with judge(i) for the i-th sample; it
// returns each sample's completeness score by sample row.
func judgedRun(t *testing.T, n int, judge func(i int) float64) (*store.DB, int64, map[int64]store.Score) {
	t.Helper()
	ctx := context.Background()
	db, err := tally.Open(ctx, filepath.Join(t.TempDir(), "assay.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	var samples []store.Sample
	for i := 1; i <= n; i++ {
		samples = append(samples, store.Sample{Ordinal: i, SampleID: string(rune('A' + i)), Input: "q", Reference: "r"})
	}
	ds := &store.Dataset{Name: "qa", Kind: assay.KindQA, SHA256: "qa", Format: "jsonl", Samples: n}
	if _, err := db.CreateDataset(ctx, ds, samples); err != nil {
		t.Fatal(err)
	}
	rows, _ := db.Samples(ctx, ds.ID, 0, 0)
	cfg := &config.Config{Evaluators: []config.Evaluator{config.EvalRubric}}
	run := &store.Run{Name: "judged", DatasetID: ds.ID, Config: cfg, Repetitions: 1, TotalTasks: n, Conditions: []assay.Condition{{Name: "a"}}}
	if err := db.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	for i, s := range rows {
		r := &store.Result{RunID: run.ID, SampleRow: s.ID, Condition: "a", Repetition: 1, Attempts: 1, Response: "x",
			Judgements: []store.Judgement{{Evaluator: "rubric", Scores: []store.Score{{Metric: "completeness", Value: judge(i)}}}}}
		if _, err := db.SaveResult(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	db.SetRunStatus(ctx, run.ID, store.RunCompleted, "")
	results, err := db.Results(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	scores := map[int64]store.Score{}
	for _, r := range results {
		scores[r.SampleRow] = r.Judgements[0].Scores[0]
	}
	return db, run.ID, scores
}

// A judge one point too generous on 40 samples: a person scores the first
// 12 of the random review order one lower than the judge did, and three
// more picked by hand further on. The corrected mean is the judge's less
// one, from the 12; the three are said to be unused.
func TestReviewsInTheRandomOrderCorrectTheMean(t *testing.T) {
	ctx := context.Background()
	db, runID, scores := judgedRun(t, 40, func(i int) float64 { return float64(2 + i%4) })
	order := make([]int64, 0, len(scores))
	for row := range scores {
		order = append(order, row)
	}
	slices.SortFunc(order, func(a, b int64) int {
		pa, pb := report.ShufflePlace(runID, a), report.ShufflePlace(runID, b)
		if pa < pb {
			return -1
		}
		return 1
	})
	review := func(row int64) {
		t.Helper()
		s := scores[row]
		if err := db.SaveReview(ctx, &store.Review{RunID: runID, ScoreID: s.ID, Reviewer: "ann", Verdict: store.VerdictOverride,
			JudgeValue: s.Value, Value: s.Value - 1}); err != nil {
			t.Fatal(err)
		}
	}
	before, err := report.Load(ctx, db, runID)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range order[:9] {
		review(row)
	}
	for _, row := range order[20:23] {
		review(row)
	}
	metric := func() report.MetricSummary {
		t.Helper()
		r, err := report.Load(ctx, db, runID)
		if err != nil {
			t.Fatal(err)
		}
		return r.Summary.Conditions[0].Metrics[0]
	}
	if m := metric(); m.PPI != nil {
		t.Fatalf("9 answers reviewed in order (and 3 by hand): a corrected mean %+v, want none under 10", *m.PPI)
	}
	for _, row := range order[9:12] {
		review(row)
	}
	m := metric()
	p := m.PPI
	if p == nil {
		t.Fatal("12 answers reviewed in the random order: no corrected mean")
	}
	if math.Abs(p.Mean-(m.Mean-1)) > 1e-9 || math.Abs(p.Shift+1) > 1e-9 {
		t.Errorf("corrected mean %.4f (shift %.4f), want the judge's %.4f less 1", p.Mean, p.Shift, m.Mean)
	}
	if p.Reviewed != 12 || p.Of != 40 || p.NotUsed != 3 || p.Order != report.OrderRandom {
		t.Errorf("reviewed %d of %d, %d not used, order %q; want 12 of 40, 3 not used, random", p.Reviewed, p.Of, p.NotUsed, p.Order)
	}
	// The residual is the same everywhere: the interval is the judge's,
	// moved by one.
	if math.Abs(p.CI95[0]-(m.CI95[0]-1)) > 1e-9 || math.Abs(p.CI95[1]-(m.CI95[1]-1)) > 1e-9 {
		t.Errorf("corrected interval %v, want the judge's %v less 1", p.CI95, m.CI95)
	}
	// A report read before the reviews, given them as a page's is.
	verdicts, _ := db.ScoreReviews(ctx, runID)
	again := before.WithReviews(report.AsJudged, verdicts).Summary.Conditions[0].Metrics[0].PPI
	if again == nil || *again != *p {
		t.Errorf("the report read before, with the reviews: %+v, want %+v", again, *p)
	}
	if before.Summary.Conditions[0].Metrics[0].PPI != nil {
		t.Error("the report read before the reviews changed")
	}
}

// B − A corrected by reviews: the judge gives a 3 and b 4 on every answer,
// people give both 3. Reviewed whole, the paired difference the judge saw
// (+1) is corrected to none.
func TestReviewsCorrectTheDifferenceBetweenConditions(t *testing.T) {
	ctx := context.Background()
	db, runID := handRun(t, func(_ int, cond string, _ int) (float64, float64) {
		if cond == "b" {
			return 1, 4
		}
		return 1, 3
	})
	results, err := db.Results(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		for _, j := range r.Judgements {
			for _, s := range j.Scores {
				if s.Metric == "completeness" {
					if err := db.SaveReview(ctx, &store.Review{RunID: runID, ScoreID: s.ID, Reviewer: "ann", Verdict: store.VerdictOverride,
						JudgeValue: s.Value, Value: 3}); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
	}
	r, err := report.Load(ctx, db, runID)
	if err != nil {
		t.Fatal(err)
	}
	mi := r.MetricIndex("rubric", "completeness")
	if d := r.Compare("a", "b")[mi].MeanDiff; d != 1 {
		t.Fatalf("the judge's B − A is %v, want 1", d)
	}
	c := r.CorrectedDiff(mi, "a", "b")
	if c == nil || math.Abs(c.Mean) > 1e-9 || c.Reviewed != 12 || c.Of != 12 {
		t.Fatalf("B − A corrected by reviews: %+v, want 0 from 12 of 12 answers", c)
	}
	if r.CorrectedDiff(r.MetricIndex("rubric", "factual_adherence"), "a", "b") != nil {
		t.Error("a metric nobody reviewed has a corrected difference")
	}
}
