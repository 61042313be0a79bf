package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"assay/internal/fixture"
	"assay/runner/llm/llmtest"
	"assay/store"
	"assay/tally"
)

// runStatus reads a run's status, message and end from the database file.
func runStatus(t *testing.T, db string, id int64) (store.RunStatus, string, string) {
	t.Helper()
	s, err := tally.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r, err := s.Run(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if r.FinishedAt == nil {
		return r.Status, r.Message, ""
	}
	return r.Status, r.Message, r.FinishedAt.String()
}

// assay run --resume of a run already completed prints its verdict and
// leaves it as it is, even where its API key is not set; a stopped run
// whose key is not set here is refused with the variable named, and stays
// stopped.
func TestResumeLeavesAFinishedRunAsItIs(t *testing.T) {
	srv := llmtest.New(llmtest.JudgeAndAgent(llmtest.Judge(nil), llmtest.Text("4")))
	defer srv.Close()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "questions.jsonl"), []byte("{\"question\": \"2+2?\", \"answer\": \"4\"}\n"), 0o644)
	cfg, db := filepath.Join(dir, "run.yaml"), filepath.Join(dir, "assay.db")
	os.WriteFile(cfg, []byte(fmt.Sprintf(`name: keyed
dataset: {path: ./questions.jsonl}
agent: {type: openai, model: agent-model, base_url: %q, api_key_env: ASSAY_TEST_RESUME_KEY}
judge: {model: judge-model, base_url: %[1]q}
conditions: {baseline: {system_prompt: "Answer briefly."}}
`, srv.URL)), 0o644)
	t.Setenv("ASSAY_TEST_RESUME_KEY", "sk-test")
	if err := run(context.Background(), []string{"run", "--config", cfg, "--db", db, "--quiet"}, &strings.Builder{}, &strings.Builder{}); err != nil {
		t.Fatalf("assay run: %v", err)
	}
	_, _, finished := runStatus(t, db, 1)
	calls := srv.Stats().Requests
	os.Unsetenv("ASSAY_TEST_RESUME_KEY")

	var out strings.Builder
	err := run(context.Background(), []string{"run", "--resume", "1", "--db", db, "--quiet", "--json"}, &out, &strings.Builder{})
	status, _, again := runStatus(t, db, 1)
	if err != nil || status != store.RunCompleted || again != finished || !strings.Contains(out.String(), `"status":"completed"`) {
		t.Errorf("resuming a completed run without its key: %v, status %s, finished %s (was %s)\n%s", err, status, again, finished, out.String())
	}
	if n := srv.Stats().Requests; n != calls {
		t.Errorf("resuming a completed run made %d calls", n-calls)
	}

	s, _ := tally.Open(context.Background(), db)
	s.SetRunStatus(context.Background(), 1, store.RunCancelled, "cancelled")
	s.Close()
	err = run(context.Background(), []string{"run", "--resume", "1", "--db", db, "--quiet"}, &strings.Builder{}, &strings.Builder{})
	status, msg, _ := runStatus(t, db, 1)
	if exitCodeOf(err) != 3 || !strings.Contains(fmt.Sprint(err), "ASSAY_TEST_RESUME_KEY (agent.api_key_env)") || status != store.RunCancelled || msg != "cancelled" {
		t.Errorf("resuming a cancelled run without its key: exit %d (%v), status %s %q", exitCodeOf(err), err, status, msg)
	}
}

// A run imported from result files is finished and read-only: assay run
// refuses to resume it or retry its failed tasks, and it keeps them.
func TestImportedRunIsNotRunAgain(t *testing.T) {
	dir := t.TempDir()
	inst := string(fixture.Read(t, "eee/ask-sre_20251123_3f1c2a9e.detailed.jsonl"))
	// The first repetition of the first line failed.
	failed := strings.Replace(inst, `"agent_response": "Rome (baseline, run 0)"`, `"agent_response": "", "error": "agent: HTTP 500", "error_kind": "agent"`, 1)
	if failed == inst {
		t.Fatal("the fixture changed: no answer to fail")
	}
	instPath, db := filepath.Join(dir, "failed.jsonl"), filepath.Join(dir, "assay.db")
	os.WriteFile(instPath, []byte(failed), 0o644)
	importEEE(t, db, fixture.Path("eee/ask-sre_20251123_3f1c2a9e.json"), instPath)
	errorsOf := func() int {
		s, _ := tally.Open(context.Background(), db)
		defer s.Close()
		n := 0
		for _, p := range must(tally.Of(s).RunProgress(context.Background(), 1)) {
			n += p.Errors
		}
		return n
	}
	if n := errorsOf(); n != 1 {
		t.Fatalf("the import has %d failed results, want 1", n)
	}
	for _, flag := range []string{"--resume", "--retry-errors"} {
		err := run(context.Background(), []string{"run", flag, "1", "--db", db, "--quiet"}, &strings.Builder{}, &strings.Builder{})
		status, _, _ := runStatus(t, db, 1)
		if exitCodeOf(err) != 3 || !strings.Contains(fmt.Sprint(err), "run 1 was imported from result files: it is finished and read-only") ||
			status != store.RunCompleted || errorsOf() != 1 {
			t.Errorf("%s of an imported run: exit %d (%v), status %s, %d failed results", flag, exitCodeOf(err), err, status, errorsOf())
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
