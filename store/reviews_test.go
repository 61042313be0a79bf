package store_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"assay"
	"assay/store"
)

func TestVerdicts(t *testing.T) {
	db := openTestDB(t)
	ctx := context.Background()
	run := seedRun(t, db, 4, 1, "a")
	results, _ := db.Results(ctx, run.ID)
	var score store.Score
	for _, r := range results {
		for _, j := range r.Judgements {
			if j.Evaluator == "rubric" && len(j.Scores) > 0 && score.ID == 0 {
				score = j.Scores[0]
			}
		}
	}
	info, err := db.ScoreInfo(ctx, run.ID, score.ID)
	if err != nil || info.Evaluator != "rubric" || info.Metric != score.Metric || info.Value != score.Value {
		t.Fatalf("score info %+v, %v", info, err)
	}
	if _, err := db.ScoreInfo(ctx, run.ID+1, score.ID); assay.ErrorCode(err) != assay.ENOTFOUND {
		t.Errorf("a score of another run: %v", err)
	}
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	db.SetClock(func() time.Time { return now })
	save := func(reviewer, verdict string, value float64, note string) {
		t.Helper()
		v := &store.Review{RunID: run.ID, ScoreID: score.ID, Reviewer: reviewer, Verdict: verdict, JudgeValue: score.Value, Value: value, Note: note}
		if err := db.SaveReview(ctx, v); err != nil {
			t.Fatal(err)
		}
		now = now.Add(time.Minute)
	}
	save("ann", store.VerdictAgree, score.Value, "")
	save("ann", store.VerdictAgree, score.Value, "") // the same twice: one row
	if vs, _ := db.Reviews(ctx, run.ID); len(vs) != 1 {
		t.Fatalf("%d verdicts after the same one twice", len(vs))
	}
	save("ann", store.VerdictOverride, 2, "misses the point") // replaces ann's
	save("ben", store.VerdictAgree, score.Value, "")          // kept beside it
	vs, _ := db.Reviews(ctx, run.ID)
	if len(vs) != 2 || vs[0].Reviewer != "ann" || vs[0].Verdict != store.VerdictOverride || vs[0].Value != 2 ||
		vs[0].Note != "misses the point" || vs[0].JudgeValue != score.Value || vs[1].Reviewer != "ben" {
		t.Fatalf("verdicts %+v", vs)
	}
	// Each verdict given, or given again, takes the run's next number:
	// what was given since a number is read alone.
	if n, last, _ := db.ReviewsVersion(ctx, run.ID); n != 2 || last != 4 {
		t.Errorf("version: %d verdicts, the last numbered %d; want 2 and 4", n, last)
	}
	for after, want := range map[int64]string{3: "ben", 2: "ann ben", 4: ""} {
		since, err := db.ReviewsSince(ctx, run.ID, after)
		var got []string
		for _, v := range since {
			got = append(got, v.Reviewer)
		}
		slices.Sort(got)
		if err != nil || strings.Join(got, " ") != want {
			t.Errorf("given after %d: %q (%v), want %q", after, got, err, want)
		}
	}
	if err := db.SaveReview(ctx, &store.Review{RunID: run.ID + 1, ScoreID: score.ID, Reviewer: "cy", Verdict: store.VerdictAgree}); assay.ErrorCode(err) != assay.ENOTFOUND {
		t.Errorf("a verdict on another run's score: %v", err)
	}
	// The judge's own score is untouched.
	again, _ := db.ScoreInfo(ctx, run.ID, score.ID)
	if again.Value != score.Value {
		t.Errorf("the judge's value became %v", again.Value)
	}
	for _, bad := range []store.Review{{Verdict: "maybe", Reviewer: "x"}, {Verdict: store.VerdictAgree}} {
		bad.RunID, bad.ScoreID = run.ID, score.ID
		if err := db.SaveReview(ctx, &bad); assay.ErrorCode(err) != assay.EINVALID {
			t.Errorf("%+v: %v", bad, err)
		}
	}
	// Deleting the run deletes its verdicts.
	db.SetRunStatus(ctx, run.ID, store.RunCompleted, "")
	if _, err := db.DeleteRun(ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	if vs, _ := db.Reviews(ctx, run.ID); len(vs) != 0 {
		t.Errorf("%d verdicts outlived their run", len(vs))
	}
}

func TestReviewLinks(t *testing.T) {
	db := openTestDB(t)
	ctx := context.Background()
	run := seedRun(t, db, 2, 1, "a")
	l, err := db.CreateReviewLink(ctx, run.ID, "Dr. Lee")
	if err != nil || len(l.Token) != 43 {
		t.Fatalf("link %+v, %v", l, err)
	}
	if _, err := db.CreateReviewLink(ctx, run.ID, ""); assay.ErrorCode(err) != assay.EINVALID {
		t.Errorf("a link for nobody: %v", err)
	}
	got, err := db.ReviewLinkByToken(ctx, l.Token)
	if err != nil || got.RunID != run.ID || got.Name != "Dr. Lee" {
		t.Fatalf("by token: %+v, %v", got, err)
	}
	if err := db.RevokeReviewLink(ctx, run.ID, l.Token); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ReviewLinkByToken(ctx, l.Token); assay.ErrorCode(err) != assay.ENOTFOUND {
		t.Errorf("a revoked link: %v", err)
	}
	links, _ := db.ReviewLinks(ctx, run.ID)
	if len(links) != 1 || links[0].RevokedAt == nil {
		t.Errorf("links %+v", links)
	}
}
