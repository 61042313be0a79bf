package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"assay/report"
	"assay/runner/llm/llmtest"
)

// A condition that failed every task: assay run exits 2, says which
// condition, and prints the most common messages with their counts.
func TestRunSaysWhatFailed(t *testing.T) {
	agent := func(req *llmtest.ChatRequest) llmtest.Reply {
		if strings.Contains(req.Messages[0].Content, "one sentence") {
			return llmtest.Reply{Status: 404, Content: "model agent-model does not exist"}
		}
		return llmtest.Reply{Content: "4"}
	}
	srv := llmtest.New(llmtest.JudgeAndAgent(llmtest.Judge(nil), agent))
	defer srv.Close()
	b := &gateBench{dir: t.TempDir()}
	os.WriteFile(filepath.Join(b.dir, "questions.jsonl"), []byte("{\"question\": \"2+2?\", \"answer\": \"4\"}\n{\"question\": \"3+3?\", \"answer\": \"6\"}\n"), 0o644)
	b.cfg, b.db = filepath.Join(b.dir, "run.yaml"), filepath.Join(b.dir, "assay.db")
	os.WriteFile(b.cfg, []byte(fmt.Sprintf(`name: failing
dataset: {path: ./questions.jsonl}
agent: {type: openai, model: agent-model, base_url: %q}
judge: {model: judge-model, base_url: %[1]q}
conditions:
  baseline: {system_prompt: "Answer briefly."}
  concise: {system_prompt: "Answer in one sentence."}
`, srv.URL)), 0o644)
	code, out, errOut := b.run()
	if code != 2 || !strings.Contains(errOut, `ended failed: every one of 6 tasks under "concise" failed`) {
		t.Errorf("exit %d, want 2 naming the condition:\n%s", code, errOut)
	}
	if !strings.Contains(out, "6× agent") || !strings.Contains(out, "model agent-model does not exist") {
		t.Errorf("the summary does not list the messages:\n%s", out)
	}
}

// A run file whose MCP server needs an unset variable: assay run refuses it
// before any call, naming the variable and where, and stores no run.
func TestRunRefusesUnsetVariables(t *testing.T) {
	srv := llmtest.New(llmtest.JudgeAndAgent(llmtest.Judge(nil), llmtest.Text("4")))
	defer srv.Close()
	b := &gateBench{dir: t.TempDir()}
	os.WriteFile(filepath.Join(b.dir, "questions.jsonl"), []byte("{\"question\": \"2+2?\", \"answer\": \"4\"}\n"), 0o644)
	b.cfg, b.db = filepath.Join(b.dir, "run.yaml"), filepath.Join(b.dir, "assay.db")
	os.WriteFile(b.cfg, []byte(fmt.Sprintf(`name: needs-vars
dataset: {path: ./questions.jsonl}
agent: {type: openai, model: agent-model, base_url: %q}
judge: {model: judge-model, base_url: %[1]q}
mcp_servers:
  docs: {type: http, url: "https://docs.example/mcp", headers: {Authorization: "Bearer ${ASSAY_TEST_UNSET_DOCS_TOKEN}"}}
conditions:
  with_docs: {mcp_servers: [docs], system_prompt: "Use the docs."}
`, srv.URL)), 0o644)
	code, out, errOut := b.run()
	if code != 3 || !strings.Contains(errOut, "ASSAY_TEST_UNSET_DOCS_TOKEN (condition with_docs: MCP server docs: headers.Authorization)") {
		t.Errorf("exit %d, want 3 naming the variable:\n%s%s", code, out, errOut)
	}
	if calls := srv.Stats().Requests; calls != 0 {
		t.Errorf("%d model calls before the refusal", calls)
	}
}

// assay run --retry-errors does a finished run's failed tasks again, and
// nothing else: the tasks that succeeded keep their results.
func TestRetryErrorsDoesOnlyTheFailedTasks(t *testing.T) {
	var broken atomic.Bool
	broken.Store(true)
	var calls atomic.Int64
	agent := func(req *llmtest.ChatRequest) llmtest.Reply {
		calls.Add(1)
		if broken.Load() && strings.Contains(req.Messages[len(req.Messages)-1].Content, "3+3") {
			return llmtest.Reply{Status: 400, Content: "quota exceeded for this project"}
		}
		return llmtest.Reply{Content: "4"}
	}
	srv := llmtest.New(llmtest.JudgeAndAgent(llmtest.Judge(nil), agent))
	defer srv.Close()
	b := &gateBench{dir: t.TempDir()}
	os.WriteFile(filepath.Join(b.dir, "questions.jsonl"), []byte("{\"question\": \"2+2?\", \"answer\": \"4\"}\n{\"question\": \"3+3?\", \"answer\": \"6\"}\n"), 0o644)
	b.cfg, b.db = filepath.Join(b.dir, "run.yaml"), filepath.Join(b.dir, "assay.db")
	os.WriteFile(b.cfg, []byte(fmt.Sprintf(`name: retry
dataset: {path: ./questions.jsonl}
agent: {type: openai, model: agent-model, base_url: %q}
judge: {model: judge-model, base_url: %[1]q}
conditions: {baseline: {system_prompt: "Answer briefly."}}
execution: {num_repetitions: 3}
`, srv.URL)), 0o644)
	code, out, _ := b.run("--json")
	var first struct {
		Errors, Results int
		Unhealthy       []string
	}
	json.Unmarshal([]byte(out), &first)
	// Half of the tasks failed: completed, but no result to act on (exit 2).
	if code != 2 || first.Errors != 3 || first.Results != 6 || len(first.Unhealthy) != 1 ||
		!strings.Contains(first.Unhealthy[0], "baseline: 3 failed calls over 6 tasks (50%, more than --max-error-rate 0.1)") {
		t.Fatalf("first run: exit %d, %d errors of %d results, %q", code, first.Errors, first.Results, first.Unhealthy)
	}
	before := calls.Load()
	broken.Store(false)
	var retryOut, retryErr bytes.Buffer
	err := run(context.Background(), []string{"run", "--retry-errors", "1", "--db", b.db, "--json"}, &retryOut, &retryErr)
	var again struct {
		Status          string
		Errors, Results int
	}
	json.Unmarshal(retryOut.Bytes(), &again)
	if err != nil || again.Status != "completed" || again.Errors != 0 || again.Results != 6 || !strings.Contains(retryErr.String(), "retrying 3 failed tasks") {
		t.Fatalf("retry: %v, %+v\n%s", err, again, retryErr.String())
	}
	if n := calls.Load() - before; n != 3 {
		t.Errorf("the retry made %d agent calls, want 3 (the failed tasks only)", n)
	}
	if err := run(context.Background(), []string{"run", "--retry-errors", "1", "--db", b.db, "--quiet"}, io.Discard, io.Discard); exitCodeOf(err) != 3 ||
		!strings.Contains(err.Error(), "no failed task") {
		t.Errorf("a retry with nothing failed: %v", err)
	}
}

// A code run's summary prints pass@k per condition, k in order.
func TestSummaryPrintsPassAtK(t *testing.T) {
	var out bytes.Buffer
	printSummary(&out, &report.Summary{Conditions: []report.ConditionSummary{{Name: "baseline",
		PassAtK:     map[string]float64{"10": 0.9, "1": 0.5, "2": 0.75},
		PassAtKCI95: map[string][2]float64{"1": {0.1, 0.9}, "2": {0.4, 1}, "10": {0.7, 1}}}}})
	if want := "baseline: pass@1 0.500 [0.100, 0.900] · pass@2 0.750 [0.400, 1.000] · pass@10 0.900 [0.700, 1.000]"; !strings.Contains(out.String(), want) {
		t.Errorf("summary:\n%s\nwant a line %q", out.String(), want)
	}
}

// A run whose every judge call failed completes, but is no result: exit 2,
// saying which condition and evaluator have no score, whatever error rate
// is allowed; a few failures under the rate leave it a result.
func TestARunWithoutScoresIsNotGreen(t *testing.T) {
	judgeDown := func(*llmtest.ChatRequest) llmtest.Reply {
		return llmtest.Reply{Status: 401, Content: "invalid x-api-key"}
	}
	srv := llmtest.New(llmtest.JudgeAndAgent(judgeDown, llmtest.Text("4")))
	defer srv.Close()
	b := &gateBench{dir: t.TempDir()}
	var data strings.Builder
	for i := 1; i <= 20; i++ {
		fmt.Fprintf(&data, "{\"question\": \"%d+%d?\", \"answer\": \"%d\"}\n", i, i, 2*i)
	}
	os.WriteFile(filepath.Join(b.dir, "questions.jsonl"), []byte(data.String()), 0o644)
	b.cfg, b.db = filepath.Join(b.dir, "run.yaml"), filepath.Join(b.dir, "assay.db")
	os.WriteFile(b.cfg, []byte(fmt.Sprintf(`name: no-scores
dataset: {path: ./questions.jsonl}
agent: {type: openai, model: agent-model, base_url: %q}
judge: {model: judge-model, base_url: %[1]q}
conditions: {baseline: {system_prompt: "Answer briefly."}}
execution: {num_repetitions: 1}
`, srv.URL)), 0o644)
	code, out, errOut := b.run("--max-error-rate", "1")
	if code != 2 || !strings.Contains(errOut, "baseline: rubric has no score (20 results, 0 agent and 20 judge errors)") ||
		!strings.Contains(out, "not a result to act on:") {
		t.Errorf("every judge call failed: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, _, errOut := b.run("--max-error-rate", "2"); code != 3 || !strings.Contains(errOut, "--max-error-rate must be between 0 and 1") {
		t.Errorf("a rate of 2: exit %d, %s", code, errOut)
	}
}
