package tally

import (
	"context"
	"math"
	"reflect"
	"testing"

	"assay/store"
)

// A finished run's scores are kept once its report folds them, and read
// back equal to those folded from its rows — panel judges, judge
// repetitions, a deterministic evaluator, fractions — until the run is
// resumed or its failed tasks cleared.
func TestKeptReportScoresAreTheFoldedOnes(t *testing.T) {
	ctx := context.Background()
	db, run, rows := goldenRun(t, 25, 2, "steady", "flaky")
	for i, s := range rows {
		for _, c := range run.Conditions {
			for rep := 1; rep <= 2; rep++ {
				r := &store.Result{RunID: run.ID, SampleRow: s.ID, Condition: c.Name, Repetition: rep, Response: "answer"}
				for place, judge := range []string{"judge-a", "judge-b"} {
					for jrep := range 2 {
						v := float64((i+rep+place+jrep)%5) + 1
						r.Judgements = append(r.Judgements, store.Judgement{Evaluator: "rubric", Judge: judge, JudgeIndex: place,
							JudgeRepetition: jrep, Scores: []store.Score{{Metric: "accuracy", Value: v}, {Metric: "clarity", Value: v / 4}}})
					}
				}
				r.Judgements = append(r.Judgements, store.Judgement{Evaluator: "exact_match", Scores: []store.Score{{Metric: "match", Value: float64(i % 2)}}})
				if c.Name == "flaky" && i%6 == rep {
					r.Error, r.ErrorKind, r.Judgements = "agent: timeout", store.ErrorTimeout, nil
				}
				if _, err := db.SaveResult(ctx, r); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	kept := func() int { return keptRows(t, db, "report_scores_kept", run.ID) }
	// scores checks that the report's scores are those folded from the
	// run's rows, and returns them.
	scores := func(step string) []MetricScores {
		t.Helper()
		data, err := Of(db).ReportData(ctx, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		want, err := metricScores(ctx, db.Read(), run.ID)
		if err != nil {
			t.Fatal(err)
		}
		sameScores(t, step, data.Scores, want)
		return want
	}
	scores("running")
	if kept() != 0 {
		t.Fatal("a running run's scores were kept")
	}
	if err := db.SetRunStatus(ctx, run.ID, store.RunCompleted, ""); err != nil {
		t.Fatal(err)
	}
	want := scores("finished")
	if kept() != 1 {
		t.Fatal("the finished run's scores were not kept")
	}
	var blob []byte
	if err := db.Read().QueryRowContext(ctx, `SELECT stats FROM report_scores_kept WHERE run_id = ?`, run.ID).Scan(&blob); err != nil {
		t.Fatal(err)
	}
	got, err := decodeScores(blob)
	if err != nil {
		t.Fatal(err)
	}
	sameScores(t, "kept", got, want)
	if len(want) != 6 || len(want[1].JudgeNames) != 2 || want[1].JudgeNames[1] != "judge-b" {
		t.Fatalf("%d columns, judges %q: want 3 metrics under 2 conditions, a panel of two", len(want), want[1].JudgeNames)
	}
	scores("read kept")

	// Resumed, one more result: the scores as they stand.
	if err := db.SetRunStatus(ctx, run.ID, store.RunRunning, ""); err != nil {
		t.Fatal(err)
	}
	extra := &store.Result{RunID: run.ID, SampleRow: rows[0].ID, Condition: "steady", Repetition: 3, Response: "late",
		Judgements: []store.Judgement{{Evaluator: "exact_match", Scores: []store.Score{{Metric: "match", Value: 1}}}}}
	if _, err := db.SaveResult(ctx, extra); err != nil {
		t.Fatal(err)
	}
	resumed := scores("resumed")
	if reflect.DeepEqual(resumed, want) {
		t.Fatal("the resumed run's scores are those kept before")
	}
	if err := db.SetRunStatus(ctx, run.ID, store.RunCompleted, ""); err != nil {
		t.Fatal(err)
	}
	scores("finished again")
	if _, err := db.ClearFailedTasks(ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	if kept() != 0 {
		t.Fatal("the kept scores outlived the results cleared")
	}
	scores("cleared")
}

// Kept scores cut short, or with a start or judge out of range, are an
// error, never a panic or other scores.
func TestKeptReportScoresCutShort(t *testing.T) {
	m := MetricScores{Condition: "a", Evaluator: "rubric", Metric: "accuracy", Samples: []int64{7, 9, 30},
		Starts: []int32{0, 2, 3, 5}, IDs: []int64{100, 101, 140, 90, 91}, Values: []float64{1, 0.25, -2, 1 << 60, math.Copysign(0, -1)},
		Reps: []int32{1, 2, 1, 1, 2}, Judges: []int8{0, 1, 1, 0, 1}, JudgeReps: []int16{0, 0, 1, 0, 1}, JudgeNames: []string{"x", "y"}}
	b := encodeScores([]MetricScores{m})
	got, err := decodeScores(b)
	if err != nil {
		t.Fatal(err)
	}
	sameScores(t, "whole", got, []MetricScores{m})
	if math.Float64bits(got[0].Values[4]) != math.Float64bits(m.Values[4]) {
		t.Fatal("a negative zero read as a zero")
	}
	for n := range len(b) {
		if _, err := decodeScores(b[:n]); err == nil {
			t.Fatalf("%d of %d bytes read", n, len(b))
		}
	}
	for _, broken := range []MetricScores{
		func() MetricScores { c := m; c.Starts = []int32{0, 2, 6, 5}; return c }(),
		func() MetricScores { c := m; c.Judges = []int8{0, 1, 2, 0, 1}; return c }(),
	} {
		if _, err := decodeScores(encodeScores([]MetricScores{broken})); err == nil {
			t.Fatalf("scores with starts %v and judges %v read", broken.Starts, broken.Judges)
		}
	}
}

// sameScores fails unless got and want hold the same scores.
func sameScores(t *testing.T, step string, got, want []MetricScores) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d columns, want %d", step, len(got), len(want))
	}
	for i := range got {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Fatalf("%s: column %d is\n%+v\nwant\n%+v", step, i, got[i], want[i])
		}
	}
}
