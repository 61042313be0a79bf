package runner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"assay/config"
	"assay/runner/llm/llmtest"
	"assay/store"
	"assay/tally"
)

func TestKeysEchoedByAServerAreNotStored(t *testing.T) {
	const key = "sk-live-0123456789abcdef"
	t.Setenv("ASSAY_TEST_KEY", key)
	echo := func(req *llmtest.ChatRequest) llmtest.Reply {
		return llmtest.Reply{Status: 401, Body: `{"error": {"message": "Incorrect API key provided: ` +
			strings.TrimPrefix(req.Header.Get("Authorization"), "Bearer ") + `"}}`}
	}
	f := newFixture(t, echo)
	yaml := fmt.Sprintf(`name: keys
dataset: {path: %q}
agent: {type: openai, model: agent-model, base_url: %q, api_key_env: ASSAY_TEST_KEY}
judge: {model: judge-model, base_url: %q}
conditions: {baseline: {system_prompt: "Answer briefly."}, careful: {system_prompt: "Think."}}
execution: {num_repetitions: 3}
`, f.qaDataset(2), f.srv.URL, f.srv.URL)
	cfg, err := config.Parse([]byte(yaml), "run.yaml", f.dir, os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	run := f.launch(cfg)
	if _, err := f.m.Execute(context.Background(), run.ID); err != nil {
		t.Fatal(err)
	}
	results, _ := f.db.Results(context.Background(), run.ID)
	if len(results) != 12 {
		t.Fatalf("%d results", len(results))
	}
	for _, r := range results {
		if !strings.Contains(r.Error, "Incorrect API key provided: [redacted]") {
			t.Fatalf("error %q should keep the server's message with the key redacted", r.Error)
		}
	}
	stored, _ := f.db.Run(context.Background(), run.ID)
	everything, _ := json.Marshal([]any{results, stored})
	if strings.Contains(string(everything), key) {
		t.Error("the key was stored")
	}
	if req := f.srv.Requests()[0]; req.Header.Get("Authorization") != "Bearer "+key {
		t.Errorf("the key was not sent: %q", req.Header.Get("Authorization"))
	}
}

func TestRunsPastTheBoundsAreRefused(t *testing.T) {
	f := newFixture(t, rubricJudge())
	cfg := f.config(f.qaDataset(3), "")
	cfg.Execution.NumRepetitions = 101
	if _, err := f.m.CreateFromConfig(context.Background(), cfg); err == nil ||
		err.Error() != "execution.num_repetitions: must be at most 100, got 101" {
		t.Errorf("101 repetitions: %v", err)
	}
	cfg.Execution.NumRepetitions = 3
	cfg.Execution.MaxConcurrent = 100000
	if _, err := f.m.CreateFromConfig(context.Background(), cfg); err == nil ||
		err.Error() != "execution.max_concurrent: must be at most 200, got 100000" {
		t.Errorf("concurrency 100000: %v", err)
	}
	if runs, _ := tally.Of(f.db).Runs(context.Background()); len(runs) != 0 {
		t.Errorf("%d runs stored", len(runs))
	}
}

func TestAStoredRunPastTheBoundsFailsInsteadOfPlanning(t *testing.T) {
	f := newFixture(t, rubricJudge())
	run := f.launch(f.config(f.qaDataset(5), ""))
	// As a database from before the bounds may hold: a billion repetitions.
	huge := &store.Run{Name: "huge", DatasetID: run.DatasetID, Config: run.Config, Conditions: run.Conditions,
		Repetitions: 1_000_000_000, TotalTasks: 10_000_000_000}
	if err := f.db.CreateRun(context.Background(), huge); err != nil {
		t.Fatal(err)
	}
	ids, err := f.m.ResumeUnfinished(context.Background())
	if err != nil || len(ids) != 2 {
		t.Fatalf("resumed %v: %v", ids, err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, _ := f.db.Run(context.Background(), huge.ID)
		if got.Status == store.RunFailed {
			if got.Message != "execution.num_repetitions: must be at most 100, got 1000000000" {
				t.Errorf("message %q", got.Message)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run is %s", got.Status)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if results, _ := f.db.Results(context.Background(), huge.ID); len(results) != 0 {
		t.Errorf("%d results of a run that cannot be planned", len(results))
	}
}

func TestAnAnswerPastTheDeadlineSaysSo(t *testing.T) {
	f := newFixture(t, llmtest.JudgeAndAgent(llmtest.Judge(nil), func(*llmtest.ChatRequest) llmtest.Reply {
		return llmtest.Reply{Hang: true}
	}))
	cfg := f.config(f.qaDataset(1), "")
	cfg.Agent.TimeoutSeconds = 1
	cfg.Execution.NumRepetitions = 1
	run := f.launch(cfg)
	if _, err := f.m.Execute(context.Background(), run.ID); err != nil {
		t.Fatal(err)
	}
	results, _ := f.db.Results(context.Background(), run.ID)
	for _, r := range results {
		if !strings.Contains(r.Error, "no answer within the agent's timeout of 1s (agent.timeout_seconds)") {
			t.Errorf("error %q", r.Error)
		}
	}
}

// A config built by a program, not read from a file, meets the same rules.
func TestCreateValidatesAConfigNotReadFromAFile(t *testing.T) {
	f := newFixture(t, rubricJudge())
	cfg := f.config(f.qaDataset(1), "")
	cfg.Agent.MaxTurns = 0
	cfg.Judge.APIKeyEnv = "sk-live-abcdef0123456789"
	_, err := f.m.CreateFromConfig(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "agent.max_turns: must be at least 1") ||
		!strings.Contains(err.Error(), "judge.api_key_env: name the variable, not the key") || strings.Contains(err.Error(), "sk-live") {
		t.Errorf("err = %v", err)
	}
}

// A run whose every model names its own key needs no key of the agent's:
// its default variable may be unset, and each model's calls carry its own.
func TestAKeyNoCallUsesIsNotNeeded(t *testing.T) {
	f := newFixture(t, rubricJudge())
	env := map[string]string{"KEY_A": "key-of-model-a", "KEY_B": "key-of-model-b"}
	m := f.manager(func(k string) string { return env[k] })
	yaml := fmt.Sprintf(`name: own-keys
dataset: {path: %q}
agent:
  type: openai
  base_url: %q
  api_key_env: OPENAI_API_KEY
  models:
    - {name: a, model: model-a, api_key_env: KEY_A}
    - {name: b, model: model-b, api_key_env: KEY_B}
evaluators: [{contains: "4"}]
conditions: {baseline: {}}
execution: {num_repetitions: 1}
`, f.qaDataset(2), f.srv.URL)
	cfg, err := config.Parse([]byte(yaml), "run.yaml", f.dir, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if unset := m.UnsetVariables(cfg, cfg.Evaluators, nil); len(unset) != 0 {
		t.Errorf("unset variables: %+v", unset)
	}
	run, err := m.CreateFromConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if status, err := m.Execute(context.Background(), run.ID); err != nil || status != store.RunCompleted {
		stored, _ := f.db.Run(context.Background(), run.ID)
		t.Fatalf("the run: %s %v (%s)", status, err, stored.Message)
	}
	keys := map[string]bool{}
	for _, req := range f.srv.Requests() {
		keys[req.Header.Get("Authorization")] = true
	}
	if !keys["Bearer key-of-model-a"] || !keys["Bearer key-of-model-b"] || len(keys) != 2 {
		t.Errorf("keys sent: %v", keys)
	}
}
