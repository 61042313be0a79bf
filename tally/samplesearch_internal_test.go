package tally

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"assay"
	"assay/internal/pgtest"
	"assay/store"
)

// A search of responses must find what LIKE finds in the run's responses,
// through the trigram index (migration 0023) and reading the run's ids in
// order alike: for results stored before the migrations and after them,
// once failed results are cleared and once a run is deleted, whatever the
// case, wildcards and letters of the text.
func TestResponseSearchFindsWhatTheScanFinds(t *testing.T) {
	pgtest.SQLiteOnly(t, "its response index")
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "assay.db")
	db, err := store.OpenMigratedTo(ctx, path, "0022", New())
	if err != nil {
		t.Fatal(err)
	}
	responses := []string{"Photosynthesis makes sugar.", "PHOTOSYNTHESIS, loudly", "It is 50_50 — or 50%.",
		`a back\slash`, "Ünïcode ÄBC and äbc", "photo synthesis", "", "x"}
	d, rows := goldenDataset(t, db, len(responses))
	storeRun := func(db *store.DB, conditions ...string) *store.Run {
		// Two repetitions: a sample's responses under a condition may hold
		// a text and lack it.
		run := &store.Run{DatasetID: d.ID, Repetitions: 2, TotalTasks: 2 * len(rows) * len(conditions)}
		for _, c := range conditions {
			run.Conditions = append(run.Conditions, assay.Condition{Name: c})
		}
		if err := db.CreateRun(ctx, run); err != nil {
			t.Fatal(err)
		}
		for rep := 1; rep <= 2; rep++ {
			for i, s := range rows {
				for k, c := range conditions {
					at := i + k + 3*(rep-1)
					r := &store.Result{RunID: run.ID, SampleRow: s.ID, Condition: c, Repetition: rep, Response: responses[at%len(responses)]}
					if at%3 == 0 {
						r.Error, r.ErrorKind = "agent: timeout after "+r.Response, store.ErrorTimeout
					}
					saveAt(t, db, r)
				}
			}
		}
		return run
	}
	before := storeRun(db, "a", "b")
	db.Close()
	if db, err = Open(ctx, path); err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	texts := []string{"photosynthesis", "PhotoSynth", "synthesis", "50_50", "50%", "0_5", `k\s`, "äbc", "ÄBC", "ünï",
		"sugar.", " — ", "is 50", "nothing like it", "ph", `"50`, "photo synthesis makes"}
	defer func(f, l func(int) int, parts int) {
		scanFrom, lackingFrom, indexedInParts, scanWhereUnindexed = f, l, parts, true
	}(scanFrom, lackingFrom, indexedInParts)
	never, always := func(int) int { return math.MaxInt32 }, func(int) int { return 0 }
	ways := []struct {
		name          string
		from, lacking func(int) int
		parts         int
		scanUnindexed bool
	}{{"as chosen", scanFrom, lackingFrom, indexedInParts, true}, {"through the index", never, never, math.MaxInt32, false},
		{"through the index in parts", never, never, 0, false}, {"in id order", always, never, 0, true},
		{"in id order counting those lacking it", always, always, 0, true}}
	check := func(when string, runs ...*store.Run) {
		t.Helper()
		for _, run := range runs {
			// The run's range of ids holds its results (migration 0028 and the committer).
			var first, last, low, high int64
			if err := db.Read().QueryRow(`SELECT results_first, results_last, (SELECT min(id) FROM results WHERE run_id = runs.id),
				(SELECT max(id) FROM results WHERE run_id = runs.id) FROM runs WHERE id = ?`, run.ID).Scan(&first, &last, &low, &high); err != nil {
				t.Fatal(err)
			}
			if first < 1 || first > low || last < high {
				t.Errorf("%s, run %d: its results' ids run from %d to %d, its range is %d to %d", when, run.ID, low, high, first, last)
			}
			for _, text := range texts {
				want := map[SampleKey]bool{}
				err := store.EachRow(ctx, db.Read(), `SELECT sample_id, condition FROM results WHERE run_id = ? AND response LIKE ? ESCAPE '\'`,
					[]any{run.ID, likePattern(text)}, func(rows *sql.Rows) error {
						var k SampleKey
						err := rows.Scan(&k.SampleRow, &k.Condition)
						want[k] = true
						return err
					})
				if err != nil {
					t.Fatal(err)
				}
				if text == "photosynthesis" && len(want) == 0 {
					t.Errorf("%s, run %d: nothing found: the check cannot fail", when, run.ID)
				}
				pairs := counted(t, db, run.ID)
				for k := range want {
					if !slices.ContainsFunc(pairs, func(c SampleCounts) bool { return c.SampleKey == k }) {
						t.Fatalf("%s, run %d: %v has a result and no row in the samples table", when, run.ID, k)
					}
				}
				for _, way := range ways {
					scanFrom, lackingFrom, indexedInParts, scanWhereUnindexed = way.from, way.lacking, way.parts, way.scanUnindexed
					got := &SampleMatches{}
					if err := Of(db).searchResponses(ctx, run.ID, text, got); err != nil {
						t.Fatal(err)
					}
					if found := got.Responses(pairs); !maps.Equal(want, found) {
						t.Errorf("%s, run %d, %q, searched %s: found %v, want %v", when, run.ID, text, way.name, keys(found), keys(want))
					}
				}
			}
		}
	}
	index := func() {
		t.Helper()
		if n, err := Of(db).IndexResponses(ctx); err != nil || n == 0 {
			t.Fatalf("indexing read %d results: %v", n, err)
		}
	}
	check("stored before the migration, not indexed", before)
	index()
	after := storeRun(db, "a", "c")
	gone := storeRun(db, "d")
	check("partly indexed", before, after, gone)
	index()
	check("indexed", before, after, gone)
	for _, run := range []*store.Run{after, gone} {
		if err := db.SetRunStatus(ctx, run.ID, store.RunCompleted, ""); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.ClearFailedTasks(ctx, after.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.DeleteRun(ctx, gone.ID); err != nil {
		t.Fatal(err)
	}
	again := storeRun(db, "e") // under the ids the deleted run freed, which the index has passed
	check("failed results cleared, a run deleted, its ids given again", before, after, again)
	// FTS5's own check compares the index with the text it reads from results.
	if _, err := rawDB(t, db).ExecContext(ctx, `INSERT INTO response_search (response_search, rank) VALUES ('integrity-check', 1)`); err != nil {
		t.Errorf("the index disagrees with the responses: %v", err)
	}
	if n, err := Of(db).IndexResponses(ctx); err != nil || n != 0 {
		t.Errorf("the index lacked %d results after the ids were given again: %v", n, err)
	}
}

// saveAt stores a result (scores left out) in a database opened at any
// version from 0019 on: by hand when it was opened at an older one (open's
// upTo), which the statements of the current schema may not fit.
func saveAt(t *testing.T, db *store.DB, r *store.Result) {
	t.Helper()
	if db.Prepared() {
		if _, err := db.SaveResult(context.Background(), r); err != nil {
			t.Fatal(err)
		}
		return
	}
	raw := rawDB(t, db)
	res, err := raw.Exec(`INSERT INTO results (run_id, sample_id, condition, repetition, response, error, error_kind, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, r.RunID, r.SampleRow, r.Condition, r.Repetition, r.Response, r.Error, r.ErrorKind,
		time.Now().UTC().Format(time.RFC3339Nano))
	if err == nil {
		r.ID, err = res.LastInsertId()
	}
	if err == nil { // as the store kept them from migration 0019 on
		_, err = raw.Exec(`UPDATE runs SET results_count = results_count + 1, results_last = max(results_last, ?)
			WHERE id = ?`, r.ID, r.RunID)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// goldenRun opens a database for the test and stores a golden dataset of
// n samples and a run over it with those conditions and repetitions.
func goldenRun(t *testing.T, n, repetitions int, conditions ...string) (*store.DB, *store.Run, []store.Sample) {
	t.Helper()
	db, err := Open(context.Background(), pgtest.Database(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	d, rows := goldenDataset(t, db, n)
	run := &store.Run{DatasetID: d.ID, Repetitions: repetitions, TotalTasks: n * repetitions * len(conditions)}
	for _, c := range conditions {
		run.Conditions = append(run.Conditions, assay.Condition{Name: c})
	}
	if err := db.CreateRun(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	return db, run, rows
}

// goldenDataset stores a dataset of n samples, s0 to s{n-1}, and returns it
// with its stored samples.
func goldenDataset(t *testing.T, db *store.DB, n int) (*store.Dataset, []store.Sample) {
	t.Helper()
	d := &store.Dataset{Name: "golden", Kind: assay.KindQA, SHA256: "feed", Format: "jsonl"}
	var samples []store.Sample
	for i := range n {
		samples = append(samples, store.Sample{Ordinal: i + 1, SampleID: fmt.Sprint("s", i), Input: "q", Reference: "r"})
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

// Each of a search's queries reads what it is meant to: the index's lists
// by MATCH (a full scan of the index would give the same answers, slower
// than reading the run's results), and the results by their ids.
func TestResponseSearchPlans(t *testing.T) {
	pgtest.SQLiteOnly(t, "its response index")
	db, err := Open(context.Background(), pgtest.Database(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []struct {
		query string
		args  []any
		want  []string
	}{
		{qCandidates, []any{`"pho"`, 1, 9}, []string{"VIRTUAL TABLE INDEX 0:M"}},
		{qResponsesIndexed, []any{1, `"pho"`, 1, 9, "%pho%"}, []string{"SCAN response_search VIRTUAL TABLE INDEX 0:M",
			"SEARCH r USING INTEGER PRIMARY KEY (rowid=?)", "SEARCH results USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)"}},
		{qResponsesScanned, []any{1, 1, 9, "%pho%"}, []string{"SEARCH results USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)"}},
	} {
		plan := explain(t, db, q.query, q.args...)
		for _, w := range q.want {
			if !strings.Contains(plan, w) {
				t.Errorf("the plan of %s\nis %s\nwithout %s", q.query, plan, w)
			}
		}
	}
}

// explain returns a query's plan, its steps joined by "; ".
func explain(t *testing.T, db *store.DB, query string, args ...any) string {
	t.Helper()
	rows, err := db.Read().Query(`EXPLAIN QUERY PLAN `+query, args...)
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
	return strings.Join(plan, "; ")
}

// A search that meets more results past the index than catchUpAt starts
// the catch-up in the background; Close waits for it.
func TestSearchStartsTheIndexCatchUp(t *testing.T) {
	pgtest.SQLiteOnly(t, "its response index")
	ctx := context.Background()
	db, err := Open(ctx, pgtest.Database(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	defer func(n int) { catchUpAt = n }(catchUpAt)
	catchUpAt = 3
	d, rows := goldenDataset(t, db, 6)
	run := &store.Run{DatasetID: d.ID, Repetitions: 1, TotalTasks: len(rows), Conditions: []assay.Condition{{Name: "a"}}}
	if err := db.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	var last int64
	for _, s := range rows {
		r := &store.Result{RunID: run.ID, SampleRow: s.ID, Condition: "a", Repetition: 1, Response: "Photosynthesis " + s.SampleID}
		if _, err := db.SaveResult(ctx, r); err != nil {
			t.Fatal(err)
		}
		last = r.ID
	}
	through := func() (n int64) {
		if err := db.Read().QueryRowContext(ctx, `SELECT indexed_through FROM response_search_state`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := through(); n != 0 {
		t.Fatalf("indexed through %d before any search", n)
	}
	report := Of(db).index.waitedFor() // a report computed meanwhile: the catch-up waits for it
	m, err := Of(db).SearchSamples(ctx, run.ID, d.ID, "photo")
	if err != nil || len(m.Responses(counted(t, db, run.ID))) != len(rows) {
		t.Fatalf("the search found %d responses of %d: %v", len(m.Responses(counted(t, db, run.ID))), len(rows), err)
	}
	report()
	Of(db).index.wg.Wait() // the catch-up it started
	if n := through(); n != last {
		t.Errorf("after the search the index reaches result %d, want %d", n, last)
	}
	if m, err = Of(db).SearchSamples(ctx, run.ID, d.ID, "PHOTO"); err != nil || len(m.Responses(counted(t, db, run.ID))) != len(rows) {
		t.Errorf("through the index the search found %d responses of %d: %v", len(m.Responses(counted(t, db, run.ID))), len(rows), err)
	}
}

// The catch-up goes on between the reads a person waits for: with none
// under way a batch starts at once; with two, one of them done, it waits;
// a read that starts during a batch ends it.
func TestCatchUpWaitsForTheReadsWaitedFor(t *testing.T) {
	pgtest.SQLiteOnly(t, "its response index")
	s := newSearchIndexer()
	starts := func(ctx context.Context) bool {
		batch, done, err := s.startBatch(ctx, true)
		if err != nil {
			return false
		}
		defer done()
		return batch.Err() == nil
	}
	if !starts(context.Background()) {
		t.Fatal("a batch waits with no read under way")
	}
	report, search := s.waitedFor(), s.waitedFor()
	report()
	stopped, stop := context.WithCancel(context.Background())
	stop()
	if starts(stopped) {
		t.Error("a batch starts while a search is under way")
	}
	search()
	if !starts(context.Background()) {
		t.Error("a batch waits once the reads are done")
	}
	batch, done, err := s.startBatch(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	read := s.waitedFor()
	if batch.Err() == nil {
		t.Error("a read started during a batch did not end it")
	}
	done()
	if starts(stopped) {
		t.Error("a batch starts while the read that ended the last is under way")
	}
	read()
	again, done, err := s.startBatch(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	s.waitedFor()()
	if again.Err() != nil {
		t.Error("a read ended a batch done again after an interruption")
	}
	done()
}

// A text in most responses is searched counting the results that lack it;
// a text whose every trigram most responses hold, and that none holds, is
// not: it would count every result. So whether the index has reached the
// run or not.
func TestSearchCountsLackingOnlyWhenMostHoldTheText(t *testing.T) {
	pgtest.SQLiteOnly(t, "its response index")
	db, run, n := runOfResponses(t, 40, func(_ int, sampleID string) string {
		return "It explains the idea, then the mechanism of " + sampleID
	})
	for _, when := range []string{"not indexed", "indexed"} {
		if when == "indexed" {
			if _, err := Of(db).IndexResponses(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		checkLacking(t, db, run, when, []lackingCase{{"explains the idea", true, n}, {"explains the mechanism", false, 0}, {"ID", true, n}})
	}
}

// In Postgres, a text the planner expects most of a run's responses to
// hold is searched by reading the run's results, counting those that lack
// it; a rare one through the trigram index. Both find what holds finds.
func TestPostgresCountsLackingWhenMostHoldTheText(t *testing.T) {
	if !pgtest.OnPostgres() {
		t.Skip("Postgres's alone (the planner's estimate): the tests run against SQLite")
	}
	db, run, n := runOfResponses(t, 300, func(i int, sampleID string) string {
		r := "It explains the idea, then the mechanism of " + sampleID
		if i%100 == 7 {
			r = "A Zebra, then " + r
		}
		return r
	})
	// What autovacuum does once a table has grown: the planner's statistics.
	if _, err := db.Read().ExecContext(context.Background(), `ANALYZE results`); err != nil {
		t.Fatal(err)
	}
	cases := []lackingCase{{"explains the idea", true, n}, {"EXPLAINS", true, n}, {"zebra", false, 3}, {"a zebra, then it", false, 3}}
	// Three times over: a statement Postgres has run five times may be
	// planned once for all values, and the estimate must still be the text's.
	checkLacking(t, db, run, "analyzed", slices.Concat(cases, cases, cases))
}

// runOfResponses stores a run of n samples under one condition, the i-th
// sample's response response(i, its id), in a database of the tests'
// store, and returns the database, the run and n.
func runOfResponses(t *testing.T, n int, response func(i int, sampleID string) string) (*store.DB, *store.Run, int) {
	t.Helper()
	ctx := context.Background()
	db, err := Open(ctx, pgtest.Database(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	d, rows := goldenDataset(t, db, n)
	run := &store.Run{DatasetID: d.ID, Repetitions: 1, TotalTasks: len(rows), Conditions: []assay.Condition{{Name: "c"}}}
	if err := db.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	for i, s := range rows {
		saveAt(t, db, &store.Result{RunID: run.ID, SampleRow: s.ID, Condition: "c", Repetition: 1, Response: response(i, s.SampleID)})
	}
	return db, run, len(rows)
}

// lackingCase is a search of a run's responses: whether it counts the
// results lacking the text, and how many samples it finds.
type lackingCase struct {
	text    string
	lacking bool
	found   int
}

// checkLacking searches the run's responses for each case's text.
func checkLacking(t *testing.T, db *store.DB, run *store.Run, when string, cases []lackingCase) {
	t.Helper()
	pairs := counted(t, db, run.ID)
	for _, c := range cases {
		m := &SampleMatches{}
		if err := Of(db).searchResponses(context.Background(), run.ID, c.text, m); err != nil {
			t.Fatal(err)
		}
		if (m.lacking != nil) != c.lacking || len(m.Responses(pairs)) != c.found {
			t.Errorf("%s, %q: counting those lacking it %v, found %d; want %v, %d", when, c.text, m.lacking != nil, len(m.Responses(pairs)), c.lacking, c.found)
		}
	}
}

// A run's results are read between its first and last result ids: a
// result stored under a lower id than its run's first (once failed results
// are cleared, the highest ids are given again) is found all the same.
func TestSearchFindsAResultUnderAnIdGivenAgain(t *testing.T) {
	pgtest.SQLiteOnly(t, "an id given again after a deletion: Postgres never gives one again")
	ctx := context.Background()
	db, err := Open(ctx, pgtest.Database(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	d, rows := goldenDataset(t, db, 3)
	newRun := func() *store.Run {
		run := &store.Run{DatasetID: d.ID, Repetitions: 1, TotalTasks: 3, Conditions: []assay.Condition{{Name: "c"}}}
		if err := db.CreateRun(ctx, run); err != nil {
			t.Fatal(err)
		}
		return run
	}
	save := func(run *store.Run, s store.Sample, response, failure string) int64 {
		r := &store.Result{RunID: run.ID, SampleRow: s.ID, Condition: "c", Repetition: 1, Response: response, Error: failure}
		if _, err := db.SaveResult(ctx, r); err != nil {
			t.Fatal(err)
		}
		return r.ID
	}
	b, a := newRun(), newRun()
	for i, s := range rows {
		failure := ""
		if i == 2 {
			failure = "agent: timeout"
		}
		save(b, s, "kept", failure)
	}
	var first int64
	for i, s := range rows {
		if id := save(a, s, "failed", "agent: timeout"); i == 0 {
			first = id
		}
	}
	for _, run := range []*store.Run{a, b} {
		if err := db.SetRunStatus(ctx, run.ID, store.RunCompleted, ""); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ClearFailedTasks(ctx, run.ID); err != nil {
			t.Fatal(err)
		}
	}
	if id := save(a, rows[0], "Photosynthesis, retried", ""); id >= first {
		t.Fatalf("the retried result has id %d, not under the run's first %d: the test tests nothing", id, first)
	}
	m, err := Of(db).SearchSamples(ctx, a.ID, d.ID, "photosynthesis")
	if err != nil {
		t.Fatal(err)
	}
	found := m.Responses(counted(t, db, a.ID))
	if want := (SampleKey{SampleRow: rows[0].ID, Condition: "c"}); !found[want] || len(found) != 1 {
		t.Errorf("the search found %v, want %v", keys(found), want)
	}
}

// counted is what the samples table counts of a run: each sample and
// condition with its results.
func counted(t *testing.T, db *store.DB, runID int64) []SampleCounts {
	t.Helper()
	st, err := Of(db).SampleStats(context.Background(), runID)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]SampleCounts, len(st.Rows))
	for i, r := range st.Rows {
		out[i] = r.SampleCounts
	}
	return out
}

// A set of matches holds what was put in it, whatever the order of the
// rows, and merges sets that start at other rows.
func TestResponseSetHoldsWhatIsPut(t *testing.T) {
	want := map[SampleKey]bool{}
	var a, b responseSet
	a.first, b.first = 640, 64
	for i, row := range []int64{700, 3, 641, 64, 5000, 130, 700} {
		c := []string{"x", "y"}[i%2]
		a.put(row, a.place(c))
		want[SampleKey{row, c}] = true
	}
	for _, row := range []int64{65, 9000, 127} {
		b.put(row, b.place("z"))
		want[SampleKey{row, "z"}] = true
	}
	b.put(64, b.place("x"))
	want[SampleKey{64, "x"}] = true
	a.merge(&b)
	m := &SampleMatches{responses: a}
	var pairs []SampleCounts
	for k := range want {
		pairs = append(pairs, SampleCounts{SampleKey: k, Results: 1})
	}
	for _, k := range []SampleKey{{700, "y"}, {2, "x"}, {9001, "z"}, {64, "w"}, {0, "x"}, {1 << 20, "x"}, {127, "z"}, {126, "z"}} {
		if !want[k] {
			pairs = append(pairs, SampleCounts{SampleKey: k, Results: 1})
		}
	}
	if got := m.Responses(pairs); !maps.Equal(got, want) {
		t.Errorf("the set holds %v, want %v", keys(got), keys(want))
	}
}

// A run deleted with more results than a batch empties the index, which
// then catches up at once, not at the next search.
func TestDeletingARunCatchesTheIndexUp(t *testing.T) {
	pgtest.SQLiteOnly(t, "its response index")
	ctx := context.Background()
	defer func(n, b int) { catchUpAt, clearIndexPast = n, b }(catchUpAt, clearIndexPast)
	catchUpAt, clearIndexPast = 3, 3
	db, keep, rows := goldenRun(t, 6, 1, "a")
	gone := &store.Run{DatasetID: keep.DatasetID, Repetitions: 1, TotalTasks: len(rows), Conditions: []assay.Condition{{Name: "a"}}}
	if err := db.CreateRun(ctx, gone); err != nil {
		t.Fatal(err)
	}
	var last int64
	for _, run := range []*store.Run{keep, gone} {
		for _, s := range rows {
			r := &store.Result{RunID: run.ID, SampleRow: s.ID, Condition: "a", Repetition: 1, Response: "an answer"}
			saveAt(t, db, r)
			if run == keep {
				last = r.ID
			}
		}
	}
	if err := db.SetRunStatus(ctx, gone.ID, store.RunCompleted, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := Of(db).IndexResponses(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := db.DeleteRun(ctx, gone.ID); err != nil {
		t.Fatal(err)
	}
	Of(db).index.wg.Wait() // the catch-up the deletion started
	var through int64
	if err := db.Read().QueryRowContext(ctx, `SELECT indexed_through FROM response_search_state`).Scan(&through); err != nil {
		t.Fatal(err)
	}
	if through != last {
		t.Errorf("after the deletion the index reaches result %d, want %d (the other run's last)", through, last)
	}
}

// Batches of the catch-up ended by reads that start meanwhile are rolled
// back whole and done again, uninterrupted, and take nothing of the writes
// committed beside them: under reads one after the other the catch-up
// ends, every result written during it is stored, and the index holds
// each response once. Besides the reads the test makes in a loop, which a
// busy machine may leave between batches, each batch meets one as it is
// about to write.
func TestInterruptedCatchUpLosesNothing(t *testing.T) {
	pgtest.SQLiteOnly(t, "its response index")
	ctx := context.Background()
	defer func(n int) { indexBatch = n }(indexBatch)
	indexBatch = 50
	db, run, rows := goldenRun(t, 400, 1, "a", "b")
	defer func() { indexBatchWrites = nil }()
	indexBatchWrites = func() { Of(db).index.waitedFor()() }
	for _, s := range rows {
		saveAt(t, db, &store.Result{RunID: run.ID, SampleRow: s.ID, Condition: "a", Repetition: 1, Response: "photosynthesis " + s.SampleID})
	}
	indexed := make(chan error, 1)
	go func() {
		_, err := Of(db).IndexResponses(ctx)
		indexed <- err
	}()
	saved := make(chan error, 1)
	go func() { // a run's results committed meanwhile
		for _, s := range rows {
			if _, err := db.SaveResult(ctx, &store.Result{RunID: run.ID, SampleRow: s.ID, Condition: "b", Repetition: 1, Response: "more"}); err != nil {
				saved <- err
				return
			}
		}
		saved <- nil
	}()
	for done := false; !done; {
		select {
		case err := <-indexed:
			if err != nil {
				t.Fatal(err)
			}
			done = true
		default:
			Of(db).index.waitedFor()() // a read, started and done
			runtime.Gosched()
		}
	}
	if err := <-saved; err != nil {
		t.Fatalf("a result written during the catch-up: %v", err)
	}
	if _, err := Of(db).IndexResponses(ctx); err != nil { // what the run wrote after it
		t.Fatal(err)
	}
	var results, indexedRows, through, last int64
	err := db.Read().QueryRowContext(ctx, `SELECT (SELECT count(*) FROM results), (SELECT count(*) FROM response_search),
		(SELECT indexed_through FROM response_search_state), (SELECT max(id) FROM results)`).Scan(&results, &indexedRows, &through, &last)
	if err != nil {
		t.Fatal(err)
	}
	if results != 800 || indexedRows != 800 || through != last {
		t.Errorf("%d results, %d responses indexed, through %d of %d", results, indexedRows, through, last)
	}
	Of(db).index.mu.Lock()
	interrupted := Of(db).index.interrupted
	Of(db).index.mu.Unlock()
	if interrupted == 0 {
		t.Error("no batch was interrupted: the test did not test it")
	}
	t.Logf("%d batches interrupted", interrupted)
}

// A search finds, in either database, the samples and conditions whose
// responses hold the text as holdsFold says: letters of ASCII whatever
// their case, other letters as they are, LIKE's wildcards and escape as
// themselves. In Postgres it goes through the trigram index.
func TestSearchFindsWhatHoldsFinds(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, pgtest.Database(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if pgtest.OnPostgres() && !db.Trigrams() {
		t.Fatal("the tests' Postgres has no trigram index of the responses")
	}
	responses := []string{"Photosynthesis makes sugar.", "PHOTOSYNTHESIS, loudly", "It is 50_50 — or 50%.",
		`a back\slash`, "Ünïcode ÄBC and äbc", "photo synthesis", "", "x"}
	d, rows := goldenDataset(t, db, len(responses))
	run := &store.Run{DatasetID: d.ID, Repetitions: 2, TotalTasks: 2 * len(rows) * 2,
		Conditions: []assay.Condition{{Name: "a"}, {Name: "b"}}}
	if err := db.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	all := map[SampleKey][]string{}
	for rep := 1; rep <= 2; rep++ {
		for i, s := range rows {
			for k, c := range []string{"a", "b"} {
				r := &store.Result{RunID: run.ID, SampleRow: s.ID, Condition: c, Repetition: rep, Response: responses[(i+k+3*(rep-1))%len(responses)]}
				saveAt(t, db, r)
				key := SampleKey{SampleRow: s.ID, Condition: c}
				all[key] = append(all[key], r.Response)
			}
		}
	}
	defer func(f, l func(int) int) { scanFrom, lackingFrom = f, l }(scanFrom, lackingFrom)
	never, always := func(int) int { return math.MaxInt32 }, func(int) int { return 0 }
	ways := []struct {
		name          string
		from, lacking func(int) int
	}{{"as chosen", scanFrom, lackingFrom}, {"through the index", never, never},
		{"in id order", always, never}, {"in id order counting those lacking it", always, always}}
	for _, way := range ways {
		scanFrom, lackingFrom = way.from, way.lacking
		for _, text := range []string{"photosynthesis", "PhotoSynth", "synthesis", "50_50", "50%", "0_5", `k\s`, "äbc", "ÄBC", "ünï",
			"sugar.", " — ", "is 50", "nothing like it", "ph", `"50`, "photo synthesis makes"} {
			m, err := Of(db).SearchSamples(ctx, run.ID, d.ID, text)
			if err != nil {
				t.Fatal(err)
			}
			got := m.Responses(counted(t, db, run.ID))
			for key, rs := range all {
				want := slices.ContainsFunc(rs, func(r string) bool { return holdsFold(r, text) })
				if got[key] != want {
					t.Errorf("searched %s: %q in %v's responses %q: found %v", way.name, text, key, rs, got[key])
				}
			}
		}
	}
}
