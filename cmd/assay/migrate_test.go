package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"assay"
	"assay/internal/pgtest"
	"assay/store"
	"assay/tally"
)

// A SQLite database holding every kind of row — a run of two models ×
// two conditions × two repetitions judged by a panel, reviews, a token,
// a session, share and review links, a rubric, a price, a saved
// condition, an audit — copied into Postgres by assay migrate: the
// counts printed are the rows there were, the ids are kept, every view of
// the run is byte for byte what it was, and what the copy's people held
// (a token, a share link) still opens it. A target that holds rows is
// refused.
func TestMigrateCopiesADatabaseWhole(t *testing.T) {
	ctx := context.Background()
	path, id := panelRun(t)
	db, err := tally.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	secret, _, err := db.CreateToken(ctx, "ci", store.RoleOwner)
	if err != nil {
		t.Fatal(err)
	}
	share, err := db.CreateShare(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateReviewLink(ctx, id, "ana"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SaveRubric(ctx, "brief", "Score 1-5 for brevity."); err != nil {
		t.Fatal(err)
	}
	if err := db.SetPrice(ctx, assay.Price{Model: "judge-a", InputPerMTok: 1, OutputPerMTok: 2}); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateCondition(ctx, &assay.Condition{Name: "saved", SystemPrompt: "Be terse."}); err != nil {
		t.Fatal(err)
	}
	if err := db.SaveAudit(ctx, id, 3, 0.01, []byte(`{"verbosity":null}`)); err != nil {
		t.Fatal(err)
	}
	db.Close()
	before := viewsAs(t, path, id, secret)
	rows := tableRows(t, "sqlite", path)

	dsn := pgtest.DSN(t)
	var out bytes.Buffer
	if err := run(ctx, []string{"migrate", "--from", path, "--to", dsn, "--json"}, &out, io.Discard); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	var counts map[string]int64
	if err := json.Unmarshal(out.Bytes(), &counts); err != nil {
		t.Fatalf("migrate --json printed %q: %v", out.String(), err)
	}
	for _, table := range []string{"runs", "results", "judgements", "scores", "reviews", "tokens", "share_links", "review_links", "rubrics", "prices", "conditions", "audits", "datasets", "samples"} {
		if counts[table] == 0 || counts[table] != rows[table] {
			t.Errorf("%s: %d copied, the file has %d", table, counts[table], rows[table])
		}
	}
	if counts["results"] != 32 || counts["reviews"] != 2 {
		t.Errorf("counts %v", counts)
	}
	after := viewsAs(t, dsn, id, secret)
	for name, b := range before {
		if after[name] != b {
			t.Errorf("%s on Postgres differs:\n%.600s\nfrom SQLite:\n%.600s", name, after[name], b)
		}
	}
	pg, err := tally.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	if tok, err := pg.TokenBySecret(ctx, secret); err != nil || tok.Name != "ci" {
		t.Errorf("the token after the copy: %+v %v", tok, err)
	}
	if got, err := pg.SharedRun(ctx, share.Token); err != nil || got != id {
		t.Errorf("the share link after the copy opens run %d: %v", got, err)
	}
	// New rows take ids past those copied.
	c := &assay.Condition{Name: "new"}
	if err := pg.CreateCondition(ctx, c); err != nil || c.ID <= int64(rows["conditions"]) {
		t.Errorf("a condition made after the copy: id %d, %v", c.ID, err)
	}

	err = run(ctx, []string{"migrate", "--from", path, "--to", dsn}, io.Discard, io.Discard)
	if exitCodeOf(err) != 1 || !strings.Contains(err.Error(), "not empty") || strings.Contains(err.Error(), "\n") {
		t.Errorf("a migrate into a database with rows: %v", err)
	}
	// Every failure exits 1, with the reason: a mistaken command line too.
	for _, args := range [][]string{{"--from", path, "--to", path}, {"--from", path}, {"--from", path, "--to", dsn, "--nope"}} {
		if err := run(ctx, append([]string{"migrate"}, args...), io.Discard, io.Discard); exitCodeOf(err) != 1 {
			t.Errorf("migrate %v: exit %d (%v), want 1", args, exitCodeOf(err), err)
		}
	}
}

// tableRows counts the rows of each table of a database.
func tableRows(t *testing.T, driver, path string) map[string]int64 {
	t.Helper()
	raw, err := sql.Open(driver, path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	out := map[string]int64{}
	for _, table := range []string{"runs", "results", "judgements", "scores", "reviews", "tokens", "share_links", "review_links", "rubrics", "prices", "conditions", "audits", "datasets", "samples"} {
		var n int64
		if err := raw.QueryRow(fmt.Sprintf(`SELECT count(*) FROM %s`, table)).Scan(&n); err != nil {
			t.Fatal(err)
		}
		out[table] = n
	}
	return out
}
