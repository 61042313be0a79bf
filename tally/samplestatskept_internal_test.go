package tally

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"testing"

	"assay/store"
)

// A finished run's samples table is kept once folded, and read back
// equal to the table folded from its rows; a running run's is not kept; a
// run resumed, or whose failed tasks are cleared, shows its results as
// they stand, and its table is kept again once it finishes.
func TestKeptSamplesTableIsTheFoldedOne(t *testing.T) {
	ctx := context.Background()
	db, run, rows := goldenRun(t, 40, 2, "steady", "flaky", "terse")
	for i, s := range rows {
		for _, c := range run.Conditions {
			for rep := 1; rep <= 2; rep++ {
				if c.Name == "terse" && i%5 == 0 {
					continue // a sample this condition never answered
				}
				v := float64((i*7+rep*3+len(c.Name))%5) + 1
				r := &store.Result{RunID: run.ID, SampleRow: s.ID, Condition: c.Name, Repetition: rep, Response: "answer",
					Judgements: []store.Judgement{
						{Evaluator: "rubric", Scores: []store.Score{{Metric: "accuracy", Value: v}, {Metric: "completeness", Value: 6 - v}}},
						{Evaluator: "exact_match", Scores: []store.Score{{Metric: "match", Value: float64(i % 2)}}}}}
				switch {
				case c.Name == "flaky" && (i+rep)%4 == 0:
					r.Error, r.ErrorKind, r.Judgements = "agent: timeout", store.ErrorTimeout, nil
				case c.Name == "flaky" && i%3 == 0:
					r.Judgements[0] = store.Judgement{Evaluator: "rubric", Error: "judge: malformed", UnverifiedClaims: []string{"x", "y"}}
				case i%4 == 1:
					r.Judgements[0].UnverifiedClaims = []string{"a claim"}
				}
				if _, err := db.SaveResult(ctx, r); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	kept := func() int { return keptRows(t, db, "sample_stats_kept", run.ID) }
	// folded is the table folded from the run's rows, and what SampleStats
	// returns: the same.
	folded := func(step string) *SampleStats {
		t.Helper()
		want, err := Of(db).foldSampleStats(ctx, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Of(db).SampleStats(ctx, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		sameStats(t, step, got, want)
		return want
	}
	folded("running")
	if n := kept(); n != 0 {
		t.Fatalf("a running run's table was kept (%d rows)", n)
	}
	if err := db.SetRunStatus(ctx, run.ID, store.RunCompleted, ""); err != nil {
		t.Fatal(err)
	}
	want := folded("finished")
	if n := kept(); n != 1 {
		t.Fatalf("%d tables kept of the finished run, want 1", n)
	}
	st, _, err := Of(db).keptSampleStats(ctx, run.ID)
	if err != nil || st == nil {
		t.Fatalf("the kept table does not read: %v", err)
	}
	sameStats(t, "kept", st, want)
	if len(want.Rows) != 40*3-8 || len(want.Metrics) != 3 {
		t.Fatalf("%d rows and %d metrics, want %d and 3", len(want.Rows), len(want.Metrics), 40*3-8)
	}

	// Resumed: a sample the terse condition had not answered is.
	if err := db.SetRunStatus(ctx, run.ID, store.RunRunning, ""); err != nil {
		t.Fatal(err)
	}
	late := &store.Result{RunID: run.ID, SampleRow: rows[0].ID, Condition: "terse", Repetition: 1, Response: "late",
		Judgements: []store.Judgement{{Evaluator: "exact_match", Scores: []store.Score{{Metric: "match", Value: 1}}}}}
	if _, err := db.SaveResult(ctx, late); err != nil {
		t.Fatal(err)
	}
	if st := folded("resumed"); len(st.Rows) != len(want.Rows)+1 {
		t.Fatalf("resumed: %d rows, want %d", len(st.Rows), len(want.Rows)+1)
	}
	if err := db.SetRunStatus(ctx, run.ID, store.RunCompleted, ""); err != nil {
		t.Fatal(err)
	}
	folded("finished again")
	Of(db).keeping.Wait()
	if st, _, _ := Of(db).keptSampleStats(ctx, run.ID); st == nil || len(st.Rows) != len(want.Rows)+1 {
		t.Fatal("the table of the run finished again was not kept")
	}

	// Its failed tasks cleared: the kept table goes with them.
	if _, err := db.ClearFailedTasks(ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	if n := kept(); n != 0 {
		t.Fatal("the kept table outlived the results cleared")
	}
	for _, r := range folded("cleared").Rows {
		if r.Errors != 0 {
			t.Fatalf("sample %d under %s: %d errors after clearing", r.SampleRow, r.Condition, r.Errors)
		}
	}
	if err := db.SetRunStatus(ctx, run.ID, store.RunCompleted, ""); err != nil {
		t.Fatal(err)
	}
	want = folded("finished after clearing")

	// A kept table that does not read is folded again and kept again.
	if _, err := rawDB(t, db).ExecContext(ctx, `UPDATE sample_stats_kept SET stats = ? WHERE run_id = ?`, []byte{1, 2}, run.ID); err != nil {
		t.Fatal(err)
	}
	folded("unreadable")
	Of(db).keeping.Wait()
	if st, _, _ := Of(db).keptSampleStats(ctx, run.ID); st == nil {
		t.Fatal("an unreadable kept table was not kept again")
	}
}

// A kept table cut short, or with a byte changed, is an error, never a
// panic or a table of other figures.
func TestKeptSamplesTableCutShort(t *testing.T) {
	st := &SampleStats{Metrics: []MetricName{{"rubric", "accuracy"}, {"exact_match", "match"}}}
	for i := range 20 {
		r := SampleCondition{SampleCounts: SampleCounts{SampleKey: SampleKey{int64(100 + i/2), []string{"a", "b"}[i%2]},
			Ordinal: i/2 + 1, SampleID: fmt.Sprint("s", i/2), Results: 2, Errors: i % 3, Claims: i}}
		// Sums in whole points, and others: a fraction, a negative, a
		// negative zero, a number too large to be whole in a float64.
		odd := []float64{0.7 * float64(i), -3, math.Copysign(0, -1), 1 << 60, math.Inf(1)}[i%5]
		r.Metrics = []MetricSums{{st.Metrics[0], 2, float64(i), float64(i * i)}, {st.Metrics[1], 1, odd, 1}}[:1+i%2]
		st.Rows = append(st.Rows, r)
	}
	b := encodeSampleStats(st)
	got, err := decodeSampleStats(b)
	if err != nil {
		t.Fatal(err)
	}
	sameStats(t, "whole", got, st)
	for i := range got.Rows {
		for k, m := range got.Rows[i].Metrics {
			if want := st.Rows[i].Metrics[k]; math.Float64bits(m.Sum) != math.Float64bits(want.Sum) {
				t.Fatalf("row %d: a sum of %g read as %g", i, want.Sum, m.Sum)
			}
		}
	}
	for n := range len(b) {
		if got, err := decodeSampleStats(b[:n]); err == nil {
			t.Fatalf("%d of %d bytes read as a table of %d rows", n, len(b), len(got.Rows))
		}
	}
	if _, err := decodeSampleStats(append(b, 0)); err == nil {
		t.Fatal("a byte too many read")
	}
}

// sameStats fails unless got and want are the same table (a row without
// sums may have none or an empty list of them).
func sameStats(t *testing.T, step string, got, want *SampleStats) {
	t.Helper()
	norm := func(st *SampleStats) *SampleStats {
		c := *st
		c.Rows = append([]SampleCondition(nil), st.Rows...)
		for i := range c.Rows {
			if len(c.Rows[i].Metrics) == 0 {
				c.Rows[i].Metrics = nil
			}
		}
		return &c
	}
	g, w := norm(got), norm(want)
	if !reflect.DeepEqual(g.Metrics, w.Metrics) {
		t.Fatalf("%s: metrics %v, want %v", step, g.Metrics, w.Metrics)
	}
	if len(g.Rows) != len(w.Rows) {
		t.Fatalf("%s: %d rows, want %d", step, len(g.Rows), len(w.Rows))
	}
	for i := range g.Rows {
		if !reflect.DeepEqual(g.Rows[i], w.Rows[i]) {
			t.Fatalf("%s: row %d is %+v, want %+v", step, i, g.Rows[i], w.Rows[i])
		}
	}
}

// keptRows waits for what db is keeping, and counts the run's rows in table.
func keptRows(t *testing.T, db *store.DB, table string, runID int64) int {
	t.Helper()
	Of(db).keeping.Wait()
	var n int
	if err := db.Read().QueryRow(`SELECT count(*) FROM `+table+` WHERE run_id = ?`, runID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
