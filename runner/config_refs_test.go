package runner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"assay/config"
	files "assay/internal/fixture"
	"assay/runner/llm/llmtest"
	"assay/store"
)

// A reference anywhere in a run file reaches the run as its value, and the
// stored config keeps the reference, not the value.
func TestReferencesReachTheRun(t *testing.T) {
	const key = "sk-test-0123456789"
	vars := map[string]string{"PREFIX": "Quiz time.", "KEYVAR": "ASSAY_AGENT_KEY", "ASSAY_AGENT_KEY": key}
	getenv := func(name string) string { return vars[name] }
	var prompts []string
	agent := func(req *llmtest.ChatRequest) llmtest.Reply {
		prompts = append(prompts, req.LastUser())
		return llmtest.Reply{Content: "Answer: B"}
	}
	f := newFixture(t, agent)
	yaml := fmt.Sprintf(`name: refs
dataset: {path: %q}
agent: {type: openai, model: agent-model, base_url: %q, api_key_env: "${KEYVAR}"}
conditions: {baseline: {system_prompt: "Answer."}}
execution: {num_repetitions: 1, max_concurrent: 1}
prompts: {mcq: "${PREFIX} {question}\n{choices}"}
`, files.Path("mmlu.jsonl"), f.srv.URL)
	cfg, err := config.Parse([]byte(yaml), "run.yaml", f.dir, getenv)
	if err != nil {
		t.Fatal(err)
	}
	m := f.manager(getenv)
	run, err := m.CreateFromConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	again, err := f.db.Run(context.Background(), run.ID)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(again.Config)
	stored := string(raw)
	if !strings.Contains(stored, `"${PREFIX} {question}\n{choices}"`) || !strings.Contains(stored, `"${KEYVAR}"`) || strings.Contains(stored, "Quiz time") {
		t.Errorf("the stored config should keep the references:\n%s", stored)
	}
	status, err := m.Execute(context.Background(), run.ID)
	if err != nil || status != store.RunCompleted {
		t.Fatalf("status %s, err %v", status, err)
	}
	if len(prompts) == 0 || !strings.HasPrefix(prompts[0], "Quiz time. ") {
		t.Errorf("the run sent %q, want the prompt with ${PREFIX} expanded", prompts)
	}
	for _, req := range f.srv.Requests() {
		if req.Header.Get("Authorization") != "Bearer "+key {
			t.Fatalf("the agent's key, named by ${KEYVAR}, was not sent: %q", req.Header.Get("Authorization"))
		}
	}
}

// A reference that cannot be resolved when the run starts fails the run
// with the key and the variable named.
func TestAnUnresolvedReferenceFailsTheRun(t *testing.T) {
	f := newFixture(t, rubricJudge())
	vars := map[string]string{"MODEL": "agent-model"}
	cfg, err := config.Parse([]byte(fmt.Sprintf(`dataset: {path: %q}
agent: {type: openai, model: "${MODEL}", base_url: %q}
judge: {model: j, base_url: %q}
conditions: {baseline: {}}
`, f.qaDataset(1), f.srv.URL, f.srv.URL)), "run.yaml", f.dir, func(n string) string { return vars[n] })
	if err != nil {
		t.Fatal(err)
	}
	m := f.manager(func(n string) string { return vars[n] })
	run, err := m.CreateFromConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	delete(vars, "MODEL") // as in a server started without it
	status, _ := m.Execute(context.Background(), run.ID)
	got, _ := f.db.Run(context.Background(), run.ID)
	if status != store.RunFailed || got.Message != "run config: agent.model: environment variable MODEL is not set (write ${MODEL:-value} for a default)" {
		t.Errorf("status %s, message %q", status, got.Message)
	}
}
