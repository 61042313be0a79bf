package tally

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"assay"
	"assay/internal/pgtest"
	"assay/store"
)

// Migration 0027 counts the results stored before it by model and cost
// source, which the report then reads in place of the index it drops.
func TestModelTotalsMigrationCountsEveryResult(t *testing.T) {
	pgtest.SQLiteOnly(t, "its migrations from before Postgres was a store")
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "assay.db")
	db, err := store.OpenMigratedTo(ctx, path, "0026", New())
	if err != nil {
		t.Fatal(err)
	}
	d, rows := goldenDataset(t, db, 5)
	var runs []*store.Run
	for range 2 {
		run := &store.Run{DatasetID: d.ID, Repetitions: 1, TotalTasks: 5, Conditions: []assay.Condition{{Name: "c"}}}
		if err := db.CreateRun(ctx, run); err != nil {
			t.Fatal(err)
		}
		runs = append(runs, run)
	}
	for i, s := range rows {
		for k, run := range runs {
			model, source := []string{"model-a", "model-b"}[(i+k)%2], []string{"prices", "agent", ""}[i%3]
			if _, err := rawDB(t, db).Exec(`INSERT INTO results (run_id, sample_id, condition, repetition, model, cost_source, created_at)
				VALUES (?, ?, 'c', 1, ?, ?, ?)`, run.ID, s.ID, model, source, time.Now().UTC().Format(time.RFC3339Nano)); err != nil {
				t.Fatal(err)
			}
		}
	}
	db.Close()

	db, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	data, err := Of(db).ReportData(ctx, runs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	// Samples 0–4 under run 1: model-a for 0, 2, 4; prices for 0 and 3, agent for 1 and 4, none for 2.
	want := []ModelUse{{"model-a", "", 1}, {"model-a", "agent", 1}, {"model-a", "prices", 1}, {"model-b", "agent", 1}, {"model-b", "prices", 1}}
	if !reflect.DeepEqual(data.Models, want) {
		t.Errorf("models after the migration\n got %+v\nwant %+v", data.Models, want)
	}
}

// Migration 0032 gives each verdict stored before it what its score is
// of, which Verdicts then reads from the verdict alone.
func TestVerdictsMigrationKnowsWhatTheirScoresAreOf(t *testing.T) {
	pgtest.SQLiteOnly(t, "its migrations from before Postgres was a store")
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "assay.db")
	db, err := store.OpenMigratedTo(ctx, path, "0031", New())
	if err != nil {
		t.Fatal(err)
	}
	d, rows := goldenDataset(t, db, 3)
	run := &store.Run{DatasetID: d.ID, Repetitions: 2, TotalTasks: 12, Conditions: []assay.Condition{{Name: "c1"}, {Name: "c2"}}}
	if err := db.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	r := &store.Result{RunID: run.ID, SampleRow: rows[2].ID, Condition: "c2", Repetition: 2, Response: "r"}
	saveAt(t, db, r)
	var score int64
	for _, q := range []string{
		`INSERT INTO judgements (result_id, run_id, evaluator) VALUES (?1, ?2, 'rubric')`,
		`INSERT INTO scores (judgement_id, result_id, run_id, metric, value) VALUES (last_insert_rowid(), ?1, ?2, 'accuracy', 5)`,
		`INSERT INTO scores (judgement_id, result_id, run_id, metric, value)
			SELECT judgement_id, ?1, ?2, 'completeness', 4 FROM scores WHERE id = last_insert_rowid()`,
		`INSERT INTO reviews (run_id, score_id, reviewer, verdict, judge_value, value, created_at)
			VALUES (?2, last_insert_rowid(), 'ada', 'override', 4, 2, '2026-11-26T07:05:00Z')`,
		// Given before ada's, stored after it (ada gave hers again since).
		`INSERT INTO reviews (run_id, score_id, reviewer, verdict, judge_value, value, created_at)
			SELECT ?2, score_id, 'bo', 'agree', 4, 4, '2026-11-26T07:01:00.5Z' FROM reviews WHERE reviewer = 'ada'`,
	} {
		if _, err := rawDB(t, db).Exec(q, r.ID, run.ID); err != nil {
			t.Fatal(err)
		}
	}
	if err := rawDB(t, db).QueryRow(`SELECT id FROM scores WHERE metric = 'completeness'`).Scan(&score); err != nil {
		t.Fatal(err)
	}
	db.Close()

	db, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	vs, err := db.Reviews(ctx, run.ID)
	if err != nil || len(vs) != 2 {
		t.Fatalf("verdicts after the migration: %+v, %v", vs, err)
	}
	if vs[0].Reviewer != "bo" || vs[0].Seq != 1 || vs[1].Seq != 2 {
		t.Errorf("the verdicts after the migration are not numbered in the order given: %+v", vs)
	}
	v := vs[1]
	if v.ScoreID != score || v.Reviewer != "ada" || v.Evaluator != "rubric" || v.Metric != "completeness" || v.Condition != "c2" ||
		v.SampleRow != rows[2].ID || v.Repetition != 2 || v.Value != 2 {
		t.Errorf("the verdict after the migration: %+v", v)
	}
}

// A database a newer assay has migrated is refused, naming the migration
// this assay does not know, before this one migrates or writes anything.
func TestOpenRefusesADatabaseOfANewerAssay(t *testing.T) {
	pgtest.SQLiteOnly(t, "its migrations from before Postgres was a store")
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "assay.db")
	db, err := store.OpenMigratedTo(ctx, path, "0021", New())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rawDB(t, db).ExecContext(ctx, `INSERT INTO schema_migrations (version, applied_at) VALUES ('9999_later', '')`); err != nil {
		t.Fatal(err)
	}
	count := func(q store.Querier) (n int) {
		t.Helper()
		if err := q.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := count(db.Read())
	db.Close()

	if db, err := Open(ctx, path); !errors.Is(err, store.ErrNewerDatabase) || !strings.Contains(err.Error(), "9999_later") ||
		!strings.Contains(err.Error(), path) {
		if db != nil {
			db.Close()
		}
		t.Fatalf("Open: %v, want it refused as written by a newer assay, naming 9999_later and the file", err)
	}
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if n := count(raw); n != before {
		t.Errorf("the refused database has %d migrations, had %d", n, before)
	}
}

// Migration 0036 keeps share and review links as hashes: the links made
// before it still open and revoke, a verdict given through one still counts
// for it, and the database no longer holds their tokens.
func TestLinksMigrationKeepsLinksWorkingAndHashed(t *testing.T) {
	pgtest.SQLiteOnly(t, "its migrations from before Postgres was a store")
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "assay.db")
	db, err := store.OpenMigratedTo(ctx, path, "0035", New())
	if err != nil {
		t.Fatal(err)
	}
	d, rows := goldenDataset(t, db, 1)
	run := &store.Run{DatasetID: d.ID, Repetitions: 1, TotalTasks: 1, Conditions: []assay.Condition{{Name: "c"}}}
	if err := db.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	r := &store.Result{RunID: run.ID, SampleRow: rows[0].ID, Condition: "c", Repetition: 1, Response: "r"}
	saveAt(t, db, r)
	const share, review = "share-token-made-before-0036-xxxxxxxxxxxxxxx", "review-token-made-before-0036-xxxxxxxxxxxxxx"
	for _, q := range []string{
		`INSERT INTO share_links (token, run_id, created_at) VALUES ('` + share + `', ?2, '2026-11-26T07:00:00Z')`,
		`INSERT INTO review_links (token, run_id, name, created_at) VALUES ('` + review + `', ?2, 'Dr. Lee', '2026-11-26T07:00:00Z')`,
		`INSERT INTO judgements (result_id, run_id, evaluator) VALUES (?1, ?2, 'rubric')`,
		`INSERT INTO scores (judgement_id, result_id, run_id, metric, value) VALUES (last_insert_rowid(), ?1, ?2, 'accuracy', 5)`,
		`INSERT INTO reviews (run_id, score_id, reviewer, verdict, judge_value, value, link, created_at, seq)
			VALUES (?2, last_insert_rowid(), 'Dr. Lee', 'agree', 5, 5, '` + review + `', '2026-11-26T07:05:00Z', 1)`,
	} {
		if _, err := rawDB(t, db).Exec(q, r.ID, run.ID); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	db, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if id, err := db.SharedRun(ctx, share); err != nil || id != run.ID {
		t.Errorf("the share link after the migration: %d, %v", id, err)
	}
	l, err := db.ReviewLinkByToken(ctx, review)
	if err != nil || l.Name != "Dr. Lee" {
		t.Fatalf("the review link after the migration: %+v, %v", l, err)
	}
	links, err := db.ReviewLinks(ctx, run.ID)
	if err != nil || len(links) != 1 || links[0].Verdicts != 1 || links[0].Key != l.Key {
		t.Errorf("the review link's verdicts after the migration: %+v, %v", links, err)
	}
	var dump strings.Builder
	for _, q := range []string{`SELECT token_hash FROM share_links`, `SELECT token_hash FROM review_links`, `SELECT link FROM reviews`} {
		var v string
		if err := db.Read().QueryRow(q).Scan(&v); err != nil {
			t.Fatal(err)
		}
		dump.WriteString(v + "\n")
	}
	if strings.Contains(dump.String(), "token-made-before") {
		t.Errorf("tokens kept in clear:\n%s", dump.String())
	}
	if err := db.RevokeShare(ctx, run.ID, share); err != nil {
		t.Errorf("revoke by the token: %v", err)
	}
	if err := db.RevokeReviewLink(ctx, run.ID, l.Key); err != nil {
		t.Errorf("revoke by the key: %v", err)
	}
	if _, err := db.SharedRun(ctx, share); !errors.Is(err, assay.ErrNotFound) {
		t.Errorf("a revoked share: %v", err)
	}
}
