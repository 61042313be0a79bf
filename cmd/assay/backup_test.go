package main

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"assay/internal/pgtest"
	"assay/report"
	"assay/runner/llm/llmtest"
	"assay/tally"
)

// summaryJSON is a run's summary as assay run --json prints it.
func summaryJSON(t *testing.T, path string, id int64) string {
	t.Helper()
	db, err := tally.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, err := report.Summarize(context.Background(), db, id)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(s)
	return string(b)
}

// TestBackupWhileARunWrites backs a database up while a run is half done
// (its agent held after ten answers), restores the copy, finds the finished
// run's report identical, and resumes the half-done run from the copy.
func TestBackupWhileARunWrites(t *testing.T) {
	db, first := finishedRun(t, 4)
	want := summaryJSON(t, db, first)

	var answered atomic.Int64
	held := make(chan struct{})
	var release sync.Once
	agent := func(req *llmtest.ChatRequest) llmtest.Reply {
		if answered.Add(1) > 10 {
			<-held
		}
		return llmtest.Reply{Content: "An answer."}
	}
	srv := llmtest.New(llmtest.JudgeAndAgent(llmtest.Judge(nil), agent))
	defer srv.Close()
	defer release.Do(func() { close(held) }) // before the server closes
	dir := t.TempDir()
	var data strings.Builder
	for i := 1; i <= 20; i++ {
		fmt.Fprintf(&data, "{\"id\": \"b%d\", \"question\": \"Q%d?\", \"answer\": \"A%d\"}\n", i, i, i)
	}
	os.WriteFile(filepath.Join(dir, "q.jsonl"), []byte(data.String()), 0o644)
	cfg := filepath.Join(dir, "run.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf(`name: during-backup
dataset: {path: ./q.jsonl}
agent: {type: openai, model: m, base_url: %q}
judge: {model: j, base_url: %q}
conditions: {only: {}}
execution: {num_repetitions: 1, max_concurrent: 2}
`, srv.URL, srv.URL)), 0o644)
	runDone := make(chan error, 1)
	go func() {
		runDone <- run(context.Background(), []string{"run", "--config", cfg, "--db", db, "--quiet"}, io.Discard, io.Discard)
	}()
	// Wait until the run has stored results and its agent is held.
	s, err := tally.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	second := first + 1
	for {
		progress, _ := tally.Of(s).RunProgress(context.Background(), second)
		if len(progress) > 0 && progress[0].Done >= 8 && answered.Load() > 10 {
			break
		}
		select {
		case err := <-runDone:
			t.Fatalf("the run ended early: %v", err)
		default:
		}
	}

	copyPath := filepath.Join(t.TempDir(), "copy.db")
	var out bytes.Buffer
	if err := run(context.Background(), []string{"backup", "--db", db, "--to", copyPath}, &out, io.Discard); err != nil {
		t.Fatalf("backup: %v", err)
	}
	if !strings.Contains(out.String(), "backed up") {
		t.Errorf("backup printed %q", out.String())
	}
	release.Do(func() { close(held) })
	if err := <-runDone; err != nil {
		t.Fatalf("the run: %v", err)
	}

	// Restore: the copy, put where a database goes, opens as one.
	restored := filepath.Join(t.TempDir(), "assay.db")
	b, _ := os.ReadFile(copyPath)
	os.WriteFile(restored, b, 0o644)
	if got := summaryJSON(t, restored, first); got != want {
		t.Errorf("the finished run's summary after restore:\n%s\nwant\n%s", got, want)
	}
	r, err := tally.Open(context.Background(), restored)
	if err != nil {
		t.Fatal(err)
	}
	half, err := r.Run(context.Background(), second)
	r.Close()
	if err != nil || half.Status.Finished() {
		t.Fatalf("the half-done run in the copy: %+v %v", half, err)
	}
	if err := run(context.Background(), []string{"run", "--resume", fmt.Sprint(second), "--db", restored, "--quiet"}, io.Discard, io.Discard); err != nil {
		t.Fatalf("resume from the copy: %v", err)
	}
	if got := summaryJSON(t, restored, second); !strings.Contains(got, `"status":"completed"`) || !strings.Contains(got, `"results":20`) {
		t.Errorf("resumed from the copy: %s", got)
	}
}

func TestBackupRefusesNonsense(t *testing.T) {
	dir := t.TempDir()
	if err := run(context.Background(), []string{"backup", "--db", filepath.Join(dir, "none.db"), "--to", filepath.Join(dir, "b.db")}, io.Discard, io.Discard); err == nil {
		t.Error("a backup of a database that does not exist")
	}
	if _, err := os.Stat(filepath.Join(dir, "none.db")); err == nil {
		t.Error("backing up a missing database created it")
	}
	if err := run(context.Background(), []string{"backup", "--db", filepath.Join(dir, "none.db")}, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "--to") {
		t.Errorf("no --to: %v", err)
	}
}

func TestScheduledBackups(t *testing.T) {
	db, id := finishedRun(t, 2)
	want := summaryJSON(t, db, id)
	dir := t.TempDir()
	_, stop := serve(t, "--db", db, "--backup-every", "50ms", "--backup-dir", dir, "--backup-keep", "2")
	defer stop()
	// Wait until more than two backups have been made, then stop the server.
	seen := map[string]bool{}
	for len(seen) < 4 {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), "assay-") && strings.HasSuffix(e.Name(), ".db") {
				seen[e.Name()] = true
			}
		}
	}
	stop()
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if len(names) != 2 {
		t.Fatalf("after %d backups the folder holds %v, want the newest 2", len(seen), names)
	}
	if got := summaryJSON(t, filepath.Join(dir, names[1]), id); got != want {
		t.Errorf("a scheduled backup's report differs:\n%s\nwant\n%s", got, want)
	}
}

// An older assay refuses a database a newer one migrated, saying so,
// rather than misread it: a backup of it writes nothing.
func TestCommandsRefuseADatabaseOfANewerAssay(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "assay.db")
	db, err := tally.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`INSERT INTO schema_migrations (version, applied_at) VALUES ('9999_later', '')`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	to := filepath.Join(dir, "copy.db")
	var stderr bytes.Buffer
	code := finish(run(context.Background(), []string{"backup", "--db", path, "--to", to}, io.Discard, &stderr), &stderr)
	if code == 0 || !strings.Contains(stderr.String(), "written by a newer assay (it has migration 9999_later") {
		t.Errorf("backup of a newer database: exit %d, printed %q", code, stderr.String())
	}
	if _, err := os.Stat(to); !os.IsNotExist(err) {
		t.Errorf("the refused backup wrote %s (%v)", to, err)
	}
}

// A server on a database of SQLite's 4 KB pages says that a restored copy
// would search faster; on a database it made, it says nothing of pages.
func TestServeSaysItsPagesAreSmall(t *testing.T) {
	old := filepath.Join(t.TempDir(), "old.db")
	raw, err := sql.Open("sqlite", "file:"+old)
	if err != nil {
		t.Fatal(err)
	}
	for _, pragma := range []string{`PRAGMA page_size = 4096`, `PRAGMA journal_mode = WAL`} {
		if _, err := raw.Exec(pragma); err != nil {
			t.Fatal(err)
		}
	}
	raw.Close()
	for _, c := range []struct {
		db   string
		says bool
	}{{old, true}, {filepath.Join(t.TempDir(), "new.db"), false}} {
		out := serveSays(t, c.db)
		if got := strings.Contains(out, "made with 4096-byte pages") && strings.Contains(out, "assay backup"); got != c.says {
			t.Errorf("serve --db %s printed (saying so: %v, want %v):\n%s", filepath.Base(c.db), got, c.says, out)
		}
	}
}

// serveSays starts a server on the database, stops it once it has
// started, and returns what it printed.
func serveSays(t *testing.T, db string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--db", db}, pw, io.Discard)
		pw.Close()
	}()
	r := bufio.NewReader(pr)
	first, err := r.ReadString('\n')
	if err != nil {
		t.Fatalf("the server did not start: %v", err)
	}
	cancel()
	rest, _ := io.ReadAll(r)
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
	return first + string(rest)
}

// A server on a Postgres database without the trigram index of the
// responses (a role that could not create pg_trgm) says how to make it;
// once it is made, the server says nothing of it and searches through it.
func TestServeSaysItHasNoTrigramIndex(t *testing.T) {
	dsn := pgtest.DSN(t)
	db, err := tally.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	if !db.Trigrams() {
		t.Fatal("the tests' Postgres made no trigram index: the test cannot see the server without one")
	}
	if _, err := db.Read().Exec(`DROP INDEX results_response_trigrams`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	const says = "no trigram index of the responses"
	out := serveSays(t, dsn)
	i := strings.Index(out, says)
	if i < 0 {
		t.Fatalf("serve on a database without the index printed:\n%s", out)
	}
	// What it says to run, run as it says.
	line := out[i:]
	line = line[:strings.IndexByte(line, '\n')]
	from, to := strings.Index(line, "CREATE EXTENSION"), strings.LastIndex(line, ";")
	if from < 0 || to < from {
		t.Fatalf("serve said %q, naming no statements to run", line)
	}
	raw, err := pgtest.OpenRaw(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for _, statement := range strings.Split(line[from:to], "; ") {
		if _, err := raw.Exec(statement); err != nil {
			t.Fatalf("%s: %v", statement, err)
		}
	}
	if out := serveSays(t, dsn); strings.Contains(out, says) {
		t.Errorf("serve, the index made as it said, printed:\n%s", out)
	}
}
