package main

import (
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"assay/runner/llm/llmtest"
	"assay/tally"
)

// varied is a fake model whose judge scores vary from answer to answer and
// favour answers given with the docs, so that a report has something to show.
func varied() llmtest.Handler {
	judge := func(req *llmtest.ChatRequest) llmtest.Reply {
		h := fnv.New32a()
		h.Write(req.Body)
		n := int(h.Sum32())
		bonus := 0
		if strings.Contains(string(req.Body), "docs") {
			bonus = 1
		}
		score := func(shift int) int { return min(5, 1+(n>>shift)%4+bonus) }
		answer, _ := llmtest.JudgeAnswer(req, map[string]any{"factual_adherence": score(0), "completeness": score(3),
			"helpfulness_and_clarity": score(6), "unverified_claims": []string{}})
		return llmtest.Reply{Content: answer}
	}
	agent := func(req *llmtest.ChatRequest) llmtest.Reply {
		return llmtest.Reply{Content: fmt.Sprintf("Answer %d, %s", req.Index, req.Messages[0].Content)}
	}
	return llmtest.JudgeAndAgent(judge, agent)
}

// finishedRun runs `assay run` over n questions × baseline and with-docs × 3
// repetitions against the fake model, into a new database, and returns the
// database's path and the run's id.
func finishedRun(t *testing.T, n int) (string, int64) {
	t.Helper()
	db, ids := finishedRuns(t, n, 1)
	return db, ids[0]
}

// finishedRuns runs the same run file `runs` times into one database.
func finishedRuns(t *testing.T, n, runs int) (string, []int64) {
	t.Helper()
	srv := llmtest.New(varied())
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	writeSums(dir, n)
	cfg := fmt.Sprintf(`name: docs-or-not
dataset: {path: ./questions.jsonl}
agent: {type: openai, model: agent-model, base_url: %q}
judge: {model: judge-model, base_url: %q, seed: 7}
conditions:
  baseline: {system_prompt: "Answer briefly."}
  with-docs: {system_prompt: "Answer briefly; read the docs first."}
execution: {num_repetitions: 3, max_concurrent: 4}
prices:
  agent-model: {input_per_mtok: 3, output_per_mtok: 15}
  judge-model: {input_per_mtok: 1, output_per_mtok: 5}
`, srv.URL, srv.URL)
	cfgPath := filepath.Join(dir, "run.yaml")
	os.WriteFile(cfgPath, []byte(cfg), 0o644)
	db := filepath.Join(dir, "assay.db")
	var ids []int64
	for range runs {
		if err := run(context.Background(), []string{"run", "--config", cfgPath, "--db", db, "--quiet"}, io.Discard, io.Discard); err != nil {
			t.Fatalf("assay run: %v", err)
		}
		ids = append(ids, lastRun(t, db))
	}
	return db, ids
}

func lastRun(t *testing.T, path string) int64 {
	t.Helper()
	db, err := tally.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	runs, err := tally.Of(db).Runs(context.Background())
	if err != nil || len(runs) == 0 {
		t.Fatalf("no run in %s: %v", path, err)
	}
	return runs[0].ID
}

// writeSums writes n samples, q1 to qN, "What is i + i?" answered 2i, to
// dir/questions.jsonl.
func writeSums(dir string, n int) {
	var data strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&data, "{\"id\": \"q%d\", \"question\": \"What is %d + %d?\", \"answer\": \"%d\"}\n", i, i, i, 2*i)
	}
	os.WriteFile(filepath.Join(dir, "questions.jsonl"), []byte(data.String()), 0o644)
}
