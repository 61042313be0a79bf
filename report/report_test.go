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

// handRun stores a run of 3 samples × conditions a, b × 2 repetitions whose
// evaluators are exact_match then rubric (the run's order), with the scores
// score(sample, condition, repetition) gives.
func handRun(t *testing.T, score func(s int, cond string, rep int) (pass float64, likert float64)) (*store.DB, int64) {
	t.Helper()
	ctx := context.Background()
	db, err := tally.Open(ctx, filepath.Join(t.TempDir(), "assay.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	var samples []store.Sample
	for i := 1; i <= 3; i++ {
		samples = append(samples, store.Sample{Ordinal: i, SampleID: string(rune('0' + i)), Input: "q", Reference: "A",
			Choices: []string{"a", "b", "c", "d"}})
	}
	ds := &store.Dataset{Name: "hand", Kind: assay.KindMCQ, SHA256: "hand", Format: "jsonl", Samples: 3}
	if _, err := db.CreateDataset(ctx, ds, samples); err != nil {
		t.Fatal(err)
	}
	rows, _ := db.Samples(ctx, ds.ID, 0, 0)
	cfg := &config.Config{Evaluators: []config.Evaluator{config.EvalExactMatch, config.EvalRubric}}
	run := &store.Run{Name: "hand", DatasetID: ds.ID, Config: cfg, Repetitions: 2, TotalTasks: 12,
		Conditions: []assay.Condition{{Name: "a"}, {Name: "b"}}}
	if err := db.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	for i, s := range rows {
		for _, c := range []string{"a", "b"} {
			for rep := 1; rep <= 2; rep++ {
				pass, likert := score(i+1, c, rep)
				r := &store.Result{RunID: run.ID, SampleRow: s.ID, Condition: c, Repetition: rep, Attempts: 1, Response: "x",
					Judgements: []store.Judgement{
						{Evaluator: "rubric", Scores: []store.Score{{Metric: "completeness", Value: likert}, {Metric: "factual_adherence", Value: likert}}},
						{Evaluator: "exact_match", Scores: []store.Score{{Metric: "exact_match", Value: pass}}}}}
				if _, err := db.SaveResult(ctx, r); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	db.SetRunStatus(ctx, run.ID, store.RunCompleted, "")
	return db, run.ID
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestReportOfAHandCheckedRun(t *testing.T) {
	// Under a, sample 1 scores 1 and 5 on the rubric (mean 3), samples 2 and 3
	// score 5 twice; under b everything scores 1 and fails.
	db, id := handRun(t, func(s int, cond string, rep int) (float64, float64) {
		switch {
		case cond == "b":
			return 0, 1
		case s == 1 && rep == 1:
			return 1, 1
		}
		return 1, 5
	})
	r, err := report.Load(context.Background(), db, id)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range r.Metrics {
		names = append(names, m.Evaluator+"."+m.Name+" "+m.Scale.String())
	}
	want := []string{"exact_match.exact_match pass/fail", "rubric.factual_adherence 1–5", "rubric.completeness 1–5"}
	if len(names) != 3 || names[0] != want[0] || names[1] != want[1] || names[2] != want[2] {
		t.Fatalf("metrics %q, want the run's evaluator order, then the rubric's: %q", names, want)
	}
	a := r.Summary.Conditions[0]
	fa := a.Metrics[1]
	// Per-sample means 3, 5, 5: mean 13/3, std over samples √(4/3), stderr √(4/9);
	// t(0.975, 2) = 4.303 puts the interval past 5, where it is clipped.
	if !near(fa.Mean, 13.0/3) || !near(fa.Std, math.Sqrt(4.0/3)) || !near(fa.Stderr, math.Sqrt(4.0/9)) || fa.CI95[1] != 5 || fa.N != 6 || fa.Samples != 3 {
		t.Errorf("a · factual_adherence %+v", fa)
	}
	// Sample 1's repetitions (1, 5) have std √8; the others 0: mean spread √8/3, one sample in three disagrees.
	if !near(fa.RepetitionSpread, math.Sqrt(8)/3) || !near(fa.Disagreement, 1.0/3) {
		t.Errorf("spread %v, disagreement %v", fa.RepetitionSpread, fa.Disagreement)
	}
	// Quality: exact_match 1, both rubric means 13/3 → (13/3 − 1)/4 = 5/6; mean of (1, 5/6, 5/6).
	if q, ok := r.Quality(a); !ok || !near(q, (1+5.0/6+5.0/6)/3) {
		t.Errorf("quality %v", q)
	}
	b := r.Summary.Conditions[1]
	if q, ok := r.Quality(b); !ok || q != 0 || b.Metrics[1].CI95 != [2]float64{1, 1} {
		t.Errorf("b: quality %v, ci %v", q, b.Metrics[1].CI95)
	}
	paired := report.ComparePaired(r.Metrics, r.Side("a"), r.Side("b"))
	if p := paired[0]; p.MeanA != 1 || p.MeanB != 0 || p.MeanDiff != -1 || p.Losses != 3 || p.N != 3 {
		t.Errorf("b against a on exact_match: %+v", p)
	}
	gaps := report.Gaps(r.Metrics, r.Side("a"), r.Side("b"), 10, true)
	// Every sample regressed; sample 1 least: its rubric means fall from 3, the others' from 5.
	if len(gaps) != 3 || !near(gaps[2].Gap, -(1+0.5+0.5)/3) || !near(gaps[0].Gap, -1) {
		t.Errorf("gaps %+v", gaps)
	}
}

func TestSampleTableFoldsRepetitions(t *testing.T) {
	db, id := handRun(t, func(s int, cond string, rep int) (float64, float64) { return 1, float64(2 * rep) })
	run, _ := db.Run(context.Background(), id)
	cfg := run.Config
	st, err := report.LoadSamples(context.Background(), db, id, cfg.Evaluators)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Metrics) != 3 || st.Metrics[0].Name != "exact_match" || st.Metrics[1].Name != "factual_adherence" {
		t.Fatalf("metrics %+v, want report order", st.Metrics)
	}
	row := st.Rows[0]
	if row.SampleID != "1" || row.Condition != "a" || row.Results != 2 || len(row.Metrics) != 3 {
		t.Fatalf("row %+v", row)
	}
	if fa := row.Metrics[1]; fa.N != 2 || fa.Mean != 3 || !near(fa.Std, math.Sqrt2) {
		t.Errorf("factual adherence over 2 and 4: %+v, want mean 3, std √2", fa)
	}
}

// A row holds every metric of the table in the table's order, with no
// score (N 0) where its results have none: an agent error, or a judge
// that scored a metric only for other samples.
func TestSampleTableRowsHoldEveryMetricInPlace(t *testing.T) {
	ctx := context.Background()
	db, err := tally.Open(ctx, filepath.Join(t.TempDir(), "assay.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ds := &store.Dataset{Name: "gaps", Kind: assay.KindQA, SHA256: "gaps", Format: "jsonl", Samples: 2}
	if _, err := db.CreateDataset(ctx, ds, []store.Sample{{Ordinal: 1, SampleID: "1", Input: "q", Reference: "r"},
		{Ordinal: 2, SampleID: "2", Input: "q", Reference: "r"}}); err != nil {
		t.Fatal(err)
	}
	rows, _ := db.Samples(ctx, ds.ID, 0, 0)
	cfg := []config.Evaluator{config.EvalExactMatch, config.EvalRubric}
	run := &store.Run{Name: "gaps", DatasetID: ds.ID, Repetitions: 1, TotalTasks: 4,
		Conditions: []assay.Condition{{Name: "a"}, {Name: "b"}}}
	if err := db.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	results := []*store.Result{ // the rubric met first: the table's order is still the evaluators'
		{SampleRow: rows[1].ID, Condition: "a", Judgements: []store.Judgement{
			{Evaluator: "rubric", Scores: []store.Score{{Metric: "completeness", Value: 4}}},
			{Evaluator: "exact_match", Scores: []store.Score{{Metric: "exact_match", Value: 0}}}}},
		{SampleRow: rows[0].ID, Condition: "a", Judgements: []store.Judgement{
			{Evaluator: "exact_match", Scores: []store.Score{{Metric: "exact_match", Value: 1}}}}},
		{SampleRow: rows[0].ID, Condition: "b", Error: "agent: timeout"},
	}
	for _, r := range results {
		r.RunID, r.Repetition, r.Attempts = run.ID, 1, 1
		if _, err := db.SaveResult(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	st, err := report.LoadSamples(ctx, db, run.ID, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Metrics) != 2 || st.Metrics[0].Name != "exact_match" || st.Metrics[1].Name != "completeness" || len(st.Rows) != 3 {
		t.Fatalf("metrics %+v, %d rows", st.Metrics, len(st.Rows))
	}
	want := [][]report.SampleMetric{{{Mean: 1, N: 1}, {}}, {{}, {}}, {{Mean: 0, N: 1}, {Mean: 4, N: 1}}}
	for i, row := range st.Rows {
		if !slices.Equal(row.Metrics, want[i]) {
			t.Errorf("row %d (%s under %s): %+v, want %+v", i, row.SampleID, row.Condition, row.Metrics, want[i])
		}
	}
	if !st.Rows[0].Scored() || st.Rows[1].Scored() {
		t.Errorf("scored: %v %v, want true false", st.Rows[0].Scored(), st.Rows[1].Scored())
	}
}

func TestOrderPutsUnknownMetricsLast(t *testing.T) {
	ms := []report.Metric{{Evaluator: "rubric", Name: "helpfulness_and_clarity"}, {Evaluator: "mine", Name: "x"},
		{Evaluator: "arbiter", Name: "overall"}, {Evaluator: "rubric", Name: "extra"}, {Evaluator: "arbiter", Name: "semantic"},
		{Evaluator: "rubric", Name: "factual_adherence"}}
	report.Order([]config.Evaluator{config.EvalArbiter, config.EvalRubric}, ms)
	var got []string
	for _, m := range ms {
		got = append(got, m.Evaluator+"."+m.Name)
	}
	want := []string{"arbiter.semantic", "arbiter.overall", "rubric.factual_adherence", "rubric.helpfulness_and_clarity", "rubric.extra", "mine.x"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("order %v, want %v", got, want)
		}
	}
}
