package tally

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"assay"
	"assay/internal/pgtest"
	"assay/store"
)

// A page of the runs list holds what the whole list holds there, results,
// errors and cost included; runs being deleted or imported are in neither,
// nor counted.
func TestRunPageIsAPartOfTheList(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, pgtest.Database(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	d, rows := goldenDataset(t, db, 3)
	for i := 1; i <= 12; i++ {
		run := &store.Run{Name: fmt.Sprintf("run-%d", i), DatasetID: d.ID, Repetitions: 1, TotalTasks: 6,
			Conditions: []assay.Condition{{Name: "a"}, {Name: "b"}}}
		if err := db.CreateRun(ctx, run); err != nil {
			t.Fatal(err)
		}
		for k, s := range rows[:i%4] {
			r := &store.Result{RunID: run.ID, SampleRow: s.ID, Condition: []string{"a", "b"}[k%2], Repetition: 1, Response: "r", CostUSD: 0.25 * float64(i)}
			if k == 1 {
				r.Error, r.ErrorKind = "agent: timeout", store.ErrorTimeout
			}
			saveAt(t, db, r)
		}
		if i%5 == 0 {
			if _, err := rawDB(t, db).ExecContext(ctx, `UPDATE runs SET status = ? WHERE id = ?`, []store.RunStatus{store.RunDeleting, store.RunImporting}[i%2], run.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	all, err := Of(db).RunList(ctx)
	if err != nil {
		t.Fatal(err)
	}
	n, err := db.RunCount(ctx)
	if err != nil || n != len(all) || n != 10 {
		t.Fatalf("%d runs counted (%v), %d listed; want 10", n, err, len(all))
	}
	withResults := 0
	for _, r := range all {
		if r.Done > 0 && r.Errors > 0 && r.CostUSD > 0 {
			withResults++
		}
	}
	if withResults < 4 {
		t.Fatalf("%d listed runs have results, errors and cost: the test tests little", withResults)
	}
	// A search reads the runs' texts, then the page's runs by id.
	if err := db.SetRunNotes(ctx, all[2].ID, []string{"Nightly", "gpu"}, "a note"); err != nil {
		t.Fatal(err)
	}
	if all, err = Of(db).RunList(ctx); err != nil {
		t.Fatal(err)
	}
	if err := Of(db).NameConditions(ctx, all); err != nil {
		t.Fatal(err)
	}
	texts, err := db.RunTexts(ctx)
	if err != nil || len(texts) != len(all) {
		t.Fatalf("%d runs' texts (%v), %d runs", len(texts), err, len(all))
	}
	for i, r := range all {
		want := store.RunText{ID: r.ID, Name: r.Name, Note: r.Note, DatasetName: r.DatasetName, Tags: r.Tags, ConditionNames: r.ConditionNames}
		got := texts[i]
		slices.Sort(got.ConditionNames)
		slices.Sort(want.ConditionNames)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("run %d's texts: %+v, want %+v", r.ID, got, want)
		}
	}
	if len(all[2].Tags) != 2 || all[2].Note != "a note" || len(all[2].ConditionNames) != 2 {
		t.Errorf("run %d has tags %q, note %q, conditions %q: the test tests little", all[2].ID, all[2].Tags, all[2].Note, all[2].ConditionNames)
	}
	some, err := Of(db).RunsByID(ctx, []int64{all[7].ID, all[1].ID, 5, 999})
	if err != nil {
		t.Fatal(err)
	}
	for i := range some {
		some[i].ConditionNames = nil
		all[i].ConditionNames = nil
	}
	want := []RunSummary{all[1], all[7]}
	for i := range want {
		want[i].ConditionNames = nil
	}
	if !reflect.DeepEqual(some, want) {
		t.Errorf("runs %d, %d, 5 (being imported) and 999 (none) by id: %+v, want %+v", all[7].ID, all[1].ID, some, want)
	}
	all, _ = Of(db).RunList(ctx)

	for _, c := range [][2]int{{0, 4}, {3, 4}, {8, 4}, {0, 20}, {12, 5}} {
		page, err := Of(db).RunPage(ctx, c[0], c[1])
		if err != nil {
			t.Fatal(err)
		}
		want := all[min(c[0], len(all)):min(c[0]+c[1], len(all))]
		if len(page) != len(want) || (len(want) > 0 && !reflect.DeepEqual(page, want)) {
			t.Errorf("runs %d to %d: %+v, want %+v", c[0], c[0]+c[1], page, want)
		}
	}
}
