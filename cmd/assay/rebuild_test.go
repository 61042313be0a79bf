package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"assay/runner/llm/llmtest"
	"assay/store"
	"assay/tally"
)

// panelRun runs two models × two conditions × two repetitions, scored by
// a panel of two judges twice each, and gives two reviews.
func panelRun(t *testing.T) (string, int64) {
	t.Helper()
	srv := llmtest.New(varied())
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	writeSums(dir, 4)
	os.WriteFile(filepath.Join(dir, "run.yaml"), fmt.Appendf(nil, `name: rebuilt
dataset: {path: ./questions.jsonl}
agent:
  type: openai
  base_url: %[1]q
  models:
    - {name: big, model: big-model}
    - {name: small, model: small-model}
judges:
  - {name: first, model: judge-a, base_url: %[1]q, seed: 7}
  - {name: second, model: judge-b, base_url: %[1]q, seed: 7}
judge_repetitions: 2
conditions:
  baseline: {system_prompt: "Answer briefly."}
  with-docs: {system_prompt: "Answer briefly; read the docs first."}
execution: {num_repetitions: 2, max_concurrent: 4}
prices:
  big-model: {input_per_mtok: 3, output_per_mtok: 15}
  small-model: {input_per_mtok: 1, output_per_mtok: 5}
`, srv.URL), 0o644)
	path := filepath.Join(dir, "assay.db")
	if err := run(context.Background(), []string{"run", "--config", filepath.Join(dir, "run.yaml"), "--db", path, "--quiet"}, io.Discard, io.Discard); err != nil {
		t.Fatalf("assay run: %v", err)
	}
	id := lastRun(t, path)
	db, err := tally.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	results, _ := db.Results(context.Background(), id)
	s := results[0].Judgements[0].Scores[0]
	for _, v := range []store.Review{
		{RunID: id, ScoreID: s.ID, Reviewer: "ana", Verdict: store.VerdictOverride, JudgeValue: s.Value, Value: 1, Note: "wrong"},
		{RunID: id, ScoreID: results[1].Judgements[1].Scores[0].ID, Reviewer: "ben", Verdict: store.VerdictAgree, JudgeValue: 3, Value: 3},
	} {
		if err := db.SaveReview(context.Background(), &v); err != nil {
			t.Fatal(err)
		}
	}
	return path, id
}

var csrfToken = regexp.MustCompile(`[A-Za-z0-9_-]{43}`)

// views is what a person reads of a run: the report as the API answers it,
// the summary assay run --json prints, and the JSON and CSV exports.
func views(t *testing.T, path string, id int64) map[string]string {
	t.Helper()
	return viewsAs(t, path, id, "")
}

// viewsAs is views read with a token, for a database that has some.
func viewsAs(t *testing.T, path string, id int64, bearer string) map[string]string {
	t.Helper()
	out := map[string]string{"summary": summaryJSON(t, path, id)}
	for _, format := range []string{"json", "csv"} {
		var b bytes.Buffer
		if err := run(context.Background(), []string{"export", "--run", fmt.Sprint(id), "--format", format, "--db", path}, &b, os.Stderr); err != nil {
			t.Fatal(err)
		}
		out[format] = b.String()
	}
	base, stop := serve(t, "--db", path)
	defer stop()
	for _, page := range []string{fmt.Sprintf("/api/runs/%d/report", id), fmt.Sprintf("/runs/%d/samples?q=Answer", id)} {
		req, _ := http.NewRequest("GET", base+page, nil)
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d %s", page, resp.StatusCode, b)
		}
		out[page] = csrfToken.ReplaceAllString(string(b), "TOKEN") // each server's own
	}
	if !strings.Contains(out[fmt.Sprintf("/api/runs/%d/report", id)], `"with-docs"`) || !strings.Contains(out[fmt.Sprintf("/runs/%d/samples?q=Answer", id)], "q4") {
		t.Fatalf("the views show no run: %.400s", out[fmt.Sprintf("/api/runs/%d/report", id)])
	}
	return out
}

// The derived tables dropped, a run reads differently; `assay rebuild`
// computes them again from the record, and every view of the run is, byte
// for byte, what it was.
func TestRebuildGivesBackTheSameReport(t *testing.T) {
	path, id := panelRun(t)
	before := views(t, path, id)

	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"sample_scores", "sample_sums", "condition_totals", "model_totals", "sample_stats_kept", "report_scores_kept", "response_search"} {
		if _, err := raw.Exec(`DELETE FROM ` + table); err != nil {
			t.Fatalf("%s: %v", table, err)
		}
	}
	if _, err := raw.Exec(`UPDATE runs SET results_count = 0, results_first = 0`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	if s := summaryJSON(t, path, id); s == before["summary"] {
		t.Fatal("the summary is the same without the derived tables: the test tests nothing")
	}

	var out bytes.Buffer
	if err := run(context.Background(), []string{"rebuild", "--db", path, "--json"}, &out, os.Stderr); err != nil {
		t.Fatalf("rebuild: %v", err)
	}
	if want := fmt.Sprintf(`{"runs":[{"run_id":%d,"results":32}],"skipped":[]}`, id); strings.TrimSpace(out.String()) != want {
		t.Errorf("rebuild --json printed %s, want %s", out.String(), want)
	}
	after := views(t, path, id)
	for name, b := range before {
		if after[name] != b {
			t.Errorf("%s after the rebuild differs:\n%.600s\nbefore:\n%.600s", name, after[name], b)
		}
	}

	// One run, again: the same.
	out.Reset()
	if err := run(context.Background(), []string{"rebuild", "--run", fmt.Sprint(id), "--db", path}, &out, os.Stderr); err != nil {
		t.Fatal(err)
	}
	if out.String() != fmt.Sprintf("rebuilt run %d: 32 results\n", id) || summaryJSON(t, path, id) != before["summary"] {
		t.Errorf("rebuild --run printed %q", out.String())
	}
	err = run(context.Background(), []string{"rebuild", "--run", "99", "--db", path}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "run 99 not found") {
		t.Errorf("rebuild of no such run: %v", err)
	}

	// A run a live process executes is left to it.
	db, err := tally.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.AcquireLease(context.Background(), id, store.ThisProcess("assay run"), time.Hour, nil); err != nil {
		t.Fatal(err)
	}
	db.Close()
	err = run(context.Background(), []string{"rebuild", "--run", fmt.Sprint(id), "--db", path}, io.Discard, io.Discard)
	if exitCodeOf(err) != 1 || !strings.Contains(err.Error(), "is being executed by assay run") {
		t.Errorf("rebuild of a run under way: %v", err)
	}
	out.Reset()
	err = run(context.Background(), []string{"rebuild", "--db", path, "--json"}, &out, io.Discard)
	if exitCodeOf(err) != 1 || strings.TrimSpace(out.String()) != fmt.Sprintf(`{"runs":[],"skipped":[%d]}`, id) {
		t.Errorf("rebuild of every run, one under way: %v, %s", err, out.String())
	}
}
