package store_test

import (
	"context"
	"testing"

	"assay/store"
)

// A review of an answer counts for every run that judged it again: carried
// onto the new run's score when the run asks, as given, changed and
// withdrawn on the source; a reviewer's own verdict on the new run stays.
// On both stores.
func TestReviewsFollowTheAnswersTheyReview(t *testing.T) {
	db := openTestDB(t)
	ctx := context.Background()
	src := seedRun(t, db, 3, 1, "a")
	again := &store.Run{DatasetID: src.DatasetID, Repetitions: 1, TotalTasks: 3, Conditions: src.Conditions, RejudgedFrom: src.ID}
	if err := db.CreateRun(ctx, again); err != nil {
		t.Fatal(err)
	}
	before, _ := db.Results(ctx, src.ID)
	scoreOf := func(r store.Result) *store.Score {
		for _, j := range r.Judgements {
			for i := range j.Scores {
				if j.Evaluator == "rubric" && j.Scores[i].Metric == "completeness" {
					return &j.Scores[i]
				}
			}
		}
		return nil
	}
	var reviewed []store.Result
	for _, r := range before {
		if scoreOf(r) != nil {
			reviewed = append(reviewed, r)
			copyOf := r
			copyOf.ID, copyOf.RunID = 0, again.ID
			for i := range copyOf.Judgements {
				copyOf.Judgements[i].ID = 0
				for k := range copyOf.Judgements[i].Scores {
					copyOf.Judgements[i].Scores[k].ID, copyOf.Judgements[i].Scores[k].Value = 0, 5
				}
			}
			if _, err := db.SaveResult(ctx, &copyOf); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(reviewed) < 2 {
		t.Fatal("the seeded run has fewer than two judged answers")
	}
	reviewed = reviewed[:0] // read again: the copies shared their judgements
	before, _ = db.Results(ctx, src.ID)
	for _, r := range before {
		if scoreOf(r) != nil {
			reviewed = append(reviewed, r)
		}
	}
	give := func(run int64, score *store.Score, who string, value float64) {
		t.Helper()
		if err := db.SaveReview(ctx, &store.Review{RunID: run, ScoreID: score.ID, Reviewer: who, Verdict: store.VerdictOverride,
			JudgeValue: score.Value, Value: value}); err != nil {
			t.Fatal(err)
		}
	}
	give(src.ID, scoreOf(reviewed[0]), "ann", 2)
	if n, err := db.CarryReviews(ctx, again.ID); err != nil || n != 1 {
		t.Fatalf("carried %d, %v; want 1", n, err)
	}
	values := func() map[string]float64 {
		t.Helper()
		list, err := db.Reviews(ctx, again.ID)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]float64{}
		for _, v := range list {
			out[v.Reviewer] += v.Value
		}
		return out
	}
	give(src.ID, scoreOf(reviewed[1]), "ben", 4)
	give(src.ID, scoreOf(reviewed[0]), "ann", 3)
	if got := values(); got["ann"] != 3 || got["ben"] != 4 {
		t.Errorf("the new run's reviews by reviewer: %v, want ann's changed 3 and ben's 4", got)
	}
	// Ben's own verdict on the new run is kept over his carried one.
	list, _ := db.Reviews(ctx, again.ID)
	for _, v := range list {
		if v.Reviewer == "ben" {
			give(again.ID, &store.Score{ID: v.ScoreID, Value: 5}, "ben", 1)
		}
	}
	give(src.ID, scoreOf(reviewed[1]), "ben", 2)
	if err := db.WithdrawReview(ctx, src.ID, scoreOf(reviewed[0]).ID, "ann"); err != nil {
		t.Fatal(err)
	}
	if got := values(); got["ann"] != 0 || got["ben"] != 1 {
		t.Errorf("after ann withdrew hers and ben gave his own: %v, want none of ann's and ben's own 1", got)
	}
}
