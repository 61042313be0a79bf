package store_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"assay"
	"assay/store"
)

// The claims of a run's executors: a sample a live executor holds is not
// another's; one that left, or whose process is gone, gives its samples
// up, and whoever claims them learns which of their tasks it finished.
// Each executor's share of the run: how many execute it, its place, what
// the others have in flight, and whether one has not renewed since it
// joined.
func TestExecutorsClaimWholeSamples(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t)
	d := &store.Dataset{Name: "d", Kind: assay.KindQA, SHA256: "claims", Format: "jsonl"}
	if _, err := db.CreateDataset(ctx, d, testSamples(4)); err != nil {
		t.Fatal(err)
	}
	samples, _ := db.Samples(ctx, d.ID, 0, 0)
	run := &store.Run{DatasetID: d.ID, Repetitions: 1, TotalTasks: 8, Conditions: []assay.Condition{{Name: "a"}, {Name: "b"}}}
	if err := db.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	row := func(i int) int64 { return samples[i].ID }
	a, b := store.Holder{ID: "a", Host: "node-a", PID: 1, Program: "assay serve"}, store.Holder{ID: "b", Host: "node-b", PID: 2, Program: "assay serve"}
	for _, h := range []store.Holder{a, b} {
		if err := db.JoinRun(ctx, run.ID, h, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	if c, err := db.ClaimSamples(ctx, run.ID, a, []int64{row(0), row(1), row(2)}, 3, nil); err != nil || !slices.Equal(c.Got, []int64{row(0), row(1), row(2)}) {
		t.Fatalf("a claimed %v (%v)", c.Got, err)
	}
	if c, err := db.ClaimSamples(ctx, run.ID, b, []int64{row(1), row(2), row(3)}, 3, nil); err != nil || !slices.Equal(c.Got, []int64{row(3)}) ||
		!slices.Equal(c.Held, []int64{row(1), row(2)}) {
		t.Fatalf("b claimed %v and found %v held while a holds samples 1 and 2 (%v)", c.Got, c.Held, err)
	}
	if more, err := db.UnclaimedWork(ctx, run.ID, 2, nil); err != nil || more {
		t.Errorf("every sample held: unclaimed work %v (%v)", more, err)
	}
	// Its share: two executors, b second by id; a has three tasks in flight.
	beat, err := db.BeatRun(ctx, run.ID, a, time.Hour, 0, func(store.Beat) int { return 3 }, nil)
	if err != nil || beat.Executors != 2 || beat.Place != 0 || beat.Others != 0 || beat.Status != store.RunPending {
		t.Errorf("a's beat: %+v (%v)", beat, err)
	}
	beat, err = db.BeatRun(ctx, run.ID, b, time.Hour, 0, func(store.Beat) int { return 0 }, nil)
	if err != nil || beat.Executors != 2 || beat.Place != 1 || beat.Others != 3 || beat.Stale {
		t.Errorf("b's beat: %+v (%v)", beat, err)
	}
	c := store.Holder{ID: "c", Host: "node-c", PID: 3, Program: "assay serve"}
	if err := db.JoinRun(ctx, run.ID, c, time.Hour); err != nil {
		t.Fatal(err)
	}
	if beat, err = db.BeatRun(ctx, run.ID, c, time.Hour, 0, func(store.Beat) int { return 0 }, nil); err != nil || !beat.Stale || beat.Executors != 3 {
		t.Errorf("c, the others not renewed since it joined: %+v (%v)", beat, err)
	}
	if err := db.LeaveRun(ctx, run.ID, c); err != nil {
		t.Fatal(err)
	}
	// a finishes sample 1 under a, then leaves: b may claim its samples,
	// and learns that task is done.
	if _, err := db.SaveResult(ctx, &store.Result{RunID: run.ID, SampleRow: row(1), Condition: "a", Repetition: 1, Response: "r", Attempts: 1}); err != nil {
		t.Fatal(err)
	}
	if err := db.LeaveRun(ctx, run.ID, a); err != nil {
		t.Fatal(err)
	}
	claimed, err := db.ClaimSamples(ctx, run.ID, b, []int64{row(0), row(1)}, 2, nil)
	if err != nil || !slices.Equal(claimed.Got, []int64{row(0), row(1)}) || len(claimed.Held) != 0 ||
		!slices.Equal(claimed.Done, []store.TaskKey{{SampleRow: row(1), Condition: "a", Repetition: 1}}) {
		t.Fatalf("after a left, b claimed %v with %v done (%v)", claimed.Got, claimed.Done, err)
	}
	// A process gone (alive says so) holds nothing, its row unexpired.
	if err := db.JoinRun(ctx, run.ID, a, time.Hour); err != nil {
		t.Fatal(err)
	}
	gone := func(h store.Holder) bool { return h.ID != "b" }
	if c, err := db.ClaimSamples(ctx, run.ID, a, []int64{row(0), row(3)}, 2, nil); err != nil || len(c.Got) != 0 {
		t.Fatalf("a claimed %v of live b's samples (%v)", c.Got, err)
	}
	if c, err := db.ClaimSamples(ctx, run.ID, b, []int64{row(2)}, 1, gone); err != nil || !slices.Equal(c.Got, []int64{row(2)}) {
		t.Fatalf("b claimed %v of sample 2, which a (gone) held (%v)", c.Got, err)
	}
	executors, err := db.Executors(ctx, run.ID)
	if err != nil || len(executors) != 2 {
		t.Fatalf("executors %v (%v)", executors, err)
	}
	if err := db.EndRunExecution(ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	if executors, err := db.Executors(ctx, run.ID); err != nil || len(executors) != 0 {
		t.Errorf("executors after the run's end: %v (%v)", executors, err)
	}
	if more, err := db.UnclaimedWork(ctx, run.ID, 2, nil); err != nil || !more {
		t.Errorf("claims given up with tasks left: unclaimed work %v (%v)", more, err)
	}
}

// A claim takes the first free candidates, up to as many as wanted, past
// those another live executor holds, and leaves the rest to whoever asks
// next.
func TestAClaimTakesTheFirstFreeSamplesItWants(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t)
	d := &store.Dataset{Name: "d", Kind: assay.KindQA, SHA256: "want", Format: "jsonl"}
	if _, err := db.CreateDataset(ctx, d, testSamples(6)); err != nil {
		t.Fatal(err)
	}
	samples, _ := db.Samples(ctx, d.ID, 0, 0)
	run := &store.Run{DatasetID: d.ID, Repetitions: 1, TotalTasks: 6, Conditions: []assay.Condition{{Name: "a"}}}
	if err := db.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	var rows []int64
	for _, s := range samples {
		rows = append(rows, s.ID)
	}
	a, b := store.Holder{ID: "a", Host: "node-a", PID: 1, Program: "assay serve"}, store.Holder{ID: "b", Host: "node-b", PID: 2, Program: "assay serve"}
	for _, h := range []store.Holder{a, b} {
		if err := db.JoinRun(ctx, run.ID, h, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	if c, err := db.ClaimSamples(ctx, run.ID, a, rows, 2, nil); err != nil || !slices.Equal(c.Got, rows[:2]) || len(c.Held) != 0 {
		t.Fatalf("a, wanting two of six, claimed %v and found %v held (%v)", c.Got, c.Held, err)
	}
	if c, err := db.ClaimSamples(ctx, run.ID, b, rows, 2, nil); err != nil || !slices.Equal(c.Got, rows[2:4]) || !slices.Equal(c.Held, rows[:2]) {
		t.Fatalf("b, wanting two of six while a holds the first two, claimed %v and found %v held (%v)", c.Got, c.Held, err)
	}
	if c, err := db.ClaimSamples(ctx, run.ID, a, rows[2:], 4, nil); err != nil || !slices.Equal(c.Got, rows[4:]) || !slices.Equal(c.Held, rows[2:4]) {
		t.Fatalf("a, asking for the last four, claimed %v and found %v held (%v)", c.Got, c.Held, err)
	}
}
