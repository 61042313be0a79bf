package store

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The trigram index of responses (migration 0023) must find what a scan of
// the responses finds: for results stored before the migration and after
// it, once failed results are cleared and once a run is deleted, whatever
// the case, wildcards and letters of the text.
func TestResponseSearchFindsWhatTheScanFinds(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "assay.db")
	db, err := open(ctx, path, "0022")
	if err != nil {
		t.Fatal(err)
	}
	responses := []string{"Photosynthesis makes sugar.", "PHOTOSYNTHESIS, loudly", "It is 50_50 — or 50%.",
		`a back\slash`, "Ünïcode ÄBC and äbc", "photo synthesis", "", "x"}
	d, rows := goldenDataset(t, db, len(responses))
	store := func(db *DB, conditions ...string) *Run {
		run := &Run{DatasetID: d.ID, Config: []byte(`{}`), Repetitions: 1, TotalTasks: len(rows) * len(conditions)}
		for _, c := range conditions {
			run.Conditions = append(run.Conditions, Condition{Name: c})
		}
		if err := db.CreateRun(ctx, run); err != nil {
			t.Fatal(err)
		}
		for i, s := range rows {
			for k, c := range conditions {
				r := &Result{RunID: run.ID, SampleRow: s.ID, Condition: c, Repetition: 1, Response: responses[(i+k)%len(responses)]}
				if (i+k)%3 == 0 {
					r.Error, r.ErrorKind = "agent: timeout after "+r.Response, ErrorTimeout
				}
				saveAt(t, db, r)
			}
		}
		return run
	}
	before := store(db, "a", "b")
	db.Close()
	if db, err = Open(ctx, path); err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	texts := []string{"photosynthesis", "PhotoSynth", "synthesis", "50_50", "50%", "0_5", `k\s`, "äbc", "ÄBC", "ünï",
		"sugar.", " — ", "is 50", "nothing like it"}
	check := func(when string, runs ...*Run) {
		t.Helper()
		for _, run := range runs {
			for _, text := range texts {
				pattern := "%" + likeEscaper.Replace(text) + "%"
				scan, index := &SampleMatches{Responses: map[SampleKey]bool{}}, &SampleMatches{Responses: map[SampleKey]bool{}}
				if err := db.responsesLike(ctx, qResponsesScanned, run.ID, pattern, scan); err != nil {
					t.Fatal(err)
				}
				if err := db.searchResponses(ctx, run.ID, text, index); err != nil {
					t.Fatal(err)
				}
				if !maps.Equal(scan.Responses, index.Responses) {
					t.Errorf("%s, run %d, %q: the index finds %v, the scan %v", when, run.ID, text, keys(index.Responses), keys(scan.Responses))
				}
				if text == "photosynthesis" && len(scan.Responses) == 0 {
					t.Errorf("%s, run %d: nothing found: the check cannot fail", when, run.ID)
				}
			}
		}
	}
	index := func() {
		t.Helper()
		if n, err := db.IndexResponses(ctx); err != nil || n == 0 {
			t.Fatalf("indexing read %d results: %v", n, err)
		}
	}
	check("stored before the migration, not indexed", before)
	index()
	after := store(db, "a", "c")
	gone := store(db, "d")
	check("partly indexed", before, after, gone)
	index()
	check("indexed", before, after, gone)
	for _, run := range []*Run{after, gone} {
		if err := db.SetRunStatus(ctx, run.ID, RunCompleted, ""); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.ClearFailedTasks(ctx, after.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.DeleteRun(ctx, gone.ID); err != nil {
		t.Fatal(err)
	}
	again := store(db, "e") // under the ids the deleted run freed, which the index has passed
	check("failed results cleared, a run deleted, its ids given again", before, after, again)
	// FTS5's own check compares the index with the text it reads from results.
	if _, err := db.write.ExecContext(ctx, `INSERT INTO response_search (response_search, rank) VALUES ('integrity-check', 1)`); err != nil {
		t.Errorf("the index disagrees with the responses: %v", err)
	}
	if n, err := db.IndexResponses(ctx); err != nil || n != 0 {
		t.Errorf("the index lacked %d results after the ids were given again: %v", n, err)
	}
}

// saveAt stores a result (scores left out) in a database opened at any
// version: by hand when it was opened at an older one (open's upTo), which
// the statements of the current schema may not fit.
func saveAt(t *testing.T, db *DB, r *Result) {
	t.Helper()
	if db.stmts.m != nil {
		if _, err := db.SaveResult(context.Background(), r); err != nil {
			t.Fatal(err)
		}
		return
	}
	res, err := db.write.Exec(`INSERT INTO results (run_id, sample_id, condition, repetition, response, error, error_kind, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, r.RunID, r.SampleRow, r.Condition, r.Repetition, r.Response, r.Error, kindOf(r.Error, r.ErrorKind),
		db.nowText())
	if err == nil {
		r.ID, err = res.LastInsertId()
	}
	if err != nil {
		t.Fatal(err)
	}
}

// goldenRun opens a database for the test and stores a golden dataset of
// n samples and a run over it with those conditions and repetitions.
func goldenRun(t *testing.T, n, repetitions int, conditions ...string) (*DB, *Run, []Sample) {
	t.Helper()
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "assay.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	d, rows := goldenDataset(t, db, n)
	run := &Run{DatasetID: d.ID, Config: []byte(`{}`), Repetitions: repetitions, TotalTasks: n * repetitions * len(conditions)}
	for _, c := range conditions {
		run.Conditions = append(run.Conditions, Condition{Name: c})
	}
	if err := db.CreateRun(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	return db, run, rows
}

// goldenDataset stores a dataset of n samples, s0 to s{n-1}, and returns it
// with its stored samples.
func goldenDataset(t *testing.T, db *DB, n int) (*Dataset, []Sample) {
	t.Helper()
	d := &Dataset{Name: "golden", Kind: KindQA, SHA256: "feed", Format: "jsonl"}
	var samples []Sample
	for i := range n {
		samples = append(samples, Sample{Ordinal: i + 1, SampleID: fmt.Sprint("s", i), Input: "q", Reference: "r"})
	}
	if _, err := db.CreateDataset(context.Background(), d, samples); err != nil {
		t.Fatal(err)
	}
	rows, err := db.Samples(context.Background(), d.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	return d, rows
}

func keys(m map[SampleKey]bool) []string {
	var out []string
	for k := range m {
		out = append(out, fmt.Sprintf("%d/%s", k.SampleRow, k.Condition))
	}
	slices.Sort(out)
	return out
}

// The index answers the search only if SQLite hands the LIKE to it; a
// full scan of the index would give the same answers, slower than the
// scan of the run's responses.
func TestResponseSearchUsesTheIndex(t *testing.T) {
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "assay.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.read.Query(`EXPLAIN QUERY PLAN `+qResponsesIndexed, 1, "%photosynthesis%")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	// FTS5 names the constraints it takes in its index string: L for LIKE, on column 0.
	if joined := strings.Join(plan, "; "); !strings.Contains(joined, "VIRTUAL TABLE INDEX 0:L0") {
		t.Errorf("the search does not give its LIKE to the index: %s", joined)
	}
}

// A search that meets more results past the index than catchUpAt starts
// the catch-up in the background; Close waits for it.
func TestSearchStartsTheIndexCatchUp(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "assay.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	defer func(n int) { catchUpAt = n }(catchUpAt)
	catchUpAt = 3
	d, rows := goldenDataset(t, db, 6)
	run := &Run{DatasetID: d.ID, Config: []byte(`{}`), Repetitions: 1, TotalTasks: len(rows), Conditions: []Condition{{Name: "a"}}}
	if err := db.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	var last int64
	for _, s := range rows {
		r := &Result{RunID: run.ID, SampleRow: s.ID, Condition: "a", Repetition: 1, Response: "Photosynthesis " + s.SampleID}
		if _, err := db.SaveResult(ctx, r); err != nil {
			t.Fatal(err)
		}
		last = r.ID
	}
	through := func() (n int64) {
		if err := db.read.QueryRowContext(ctx, `SELECT indexed_through FROM response_search_state`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := through(); n != 0 {
		t.Fatalf("indexed through %d before any search", n)
	}
	m, err := db.SearchSamples(ctx, run.ID, d.ID, "photo")
	if err != nil || len(m.Responses) != len(rows) {
		t.Fatalf("the search found %d responses of %d: %v", len(m.Responses), len(rows), err)
	}
	db.index.wg.Wait() // the catch-up it started
	if n := through(); n != last {
		t.Errorf("after the search the index reaches result %d, want %d", n, last)
	}
	if m, err = db.SearchSamples(ctx, run.ID, d.ID, "PHOTO"); err != nil || len(m.Responses) != len(rows) {
		t.Errorf("through the index the search found %d responses of %d: %v", len(m.Responses), len(rows), err)
	}
}
