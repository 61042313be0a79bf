package web

import (
	"context"
	"log/slog"
	"reflect"
	"testing"

	"assay"
	"assay/readmodel"
	"assay/store"
	"assay/tally"
)

// The verdicts a server keeps are, after each verdict given, given again
// or taken away, those the store lists, in its order: read whole once,
// then only those given since.
func TestVerdictsKeptAreThoseStored(t *testing.T) {
	ctx := context.Background()
	db, d, rows := storedSamples(t, 3)
	run := &store.Run{DatasetID: d.ID, Repetitions: 1, TotalTasks: 3, Conditions: []assay.Condition{{Name: "a"}}}
	if err := db.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	var scores []store.Score
	for _, s := range rows {
		r := &store.Result{RunID: run.ID, SampleRow: s.ID, Condition: "a", Repetition: 1, Response: "answer",
			Judgements: []store.Judgement{{Evaluator: "rubric", Scores: []store.Score{{Metric: "accuracy", Value: 4}, {Metric: "completeness", Value: 3}}}}}
		if _, err := db.SaveResult(ctx, r); err != nil {
			t.Fatal(err)
		}
		scores = append(scores, r.Judgements[0].Scores...)
	}
	m := readmodel.NewModel(db, slog.Default())
	var held *readmodel.HeldReviews
	var err error
	check := func(step string, wantOverridden int) {
		t.Helper()
		if held, err = m.Reviews(ctx, run.ID); err != nil {
			t.Fatal(err)
		}
		want, err := db.Reviews(ctx, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(held.List, want) {
			t.Errorf("%s: kept\n%+v\nstored\n%+v", step, held.List, want)
		}
		n := 0
		for _, r := range rows {
			if held.Index().Overridden(tally.SampleKey{SampleRow: r.ID, Condition: "a"}) {
				n++
			}
		}
		if n != wantOverridden {
			t.Errorf("%s: %d samples overridden, want %d", step, n, wantOverridden)
		}
	}
	give := func(reviewer string, score store.Score, value float64) {
		t.Helper()
		v := &store.Review{RunID: run.ID, ScoreID: score.ID, Reviewer: reviewer, Verdict: store.VerdictAgree, JudgeValue: score.Value, Value: value}
		if value != score.Value {
			v.Verdict = store.VerdictOverride
		}
		if err := db.SaveReview(ctx, v); err != nil {
			t.Fatal(err)
		}
	}
	check("none", 0)
	give("ann", scores[5], 3) // the third sample's completeness
	give("ann", scores[0], 4)
	check("two given", 0)
	give("ben", scores[0], 1)
	give("ann", scores[2], 2)
	check("an override of each of two samples", 2)
	give("ben", scores[0], 4) // given again: agrees now
	check("one given again", 1)
	before := held
	check("nothing new", 1)
	if held != before {
		t.Error("the verdicts were read again with nothing new")
	}
	if err := db.SetRunStatus(ctx, run.ID, store.RunCompleted, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := db.DeleteRun(ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	if held, err = m.Reviews(ctx, run.ID); err != nil || len(held.List) != 0 {
		t.Errorf("%d verdicts kept of a deleted run (%v)", len(held.List), err)
	}
}
