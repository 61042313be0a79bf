package runner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"assay/config"
	"assay/runner/llm/llmtest"
	"assay/store"
)

// keyParts are the parts of key a stored text must not hold: every run of
// 8 of its bytes.
func keyParts(key string) []string {
	var out []string
	for i := 0; i+8 <= len(key); i++ {
		out = append(out, key[i:i+8])
	}
	return out
}

// storedParts are the parts of key the run's results and run row hold.
func storedParts(t *testing.T, f *fixture, runID int64, key string) []string {
	t.Helper()
	results, err := f.db.Results(context.Background(), runID)
	if err != nil || len(results) == 0 {
		t.Fatalf("%d results: %v", len(results), err)
	}
	stored, _ := f.db.Run(context.Background(), runID)
	everything, _ := json.Marshal([]any{results, stored})
	var found []string
	for _, p := range keyParts(key) {
		if strings.Contains(string(everything), p) {
			found = append(found, p)
		}
	}
	return found
}

// A key across the place where a text is cut — an error body's 200-character
// snippet, a command's stderr kept from its end — leaves no part of itself:
// the text is cleaned before it is cut, and a key's part at a cut is taken
// for the key.
func TestAKeyAcrossACutLeavesNoPartOfItself(t *testing.T) {
	const key = "sk-live-0123456789abcdef0123"
	t.Setenv("ASSAY_TEST_KEY", key)
	t.Run("an error body's snippet", func(t *testing.T) {
		body := strings.Repeat("x", 185) + " " + key + " was refused by the gateway"
		f := newFixture(t, func(req *llmtest.ChatRequest) llmtest.Reply {
			return llmtest.Reply{Status: 400, Body: body}
		})
		yaml := fmt.Sprintf(`dataset: {path: %q}
agent: {type: openai, model: agent-model, base_url: %q, api_key_env: ASSAY_TEST_KEY}
judge: {model: judge-model, base_url: %q}
conditions: {baseline: {system_prompt: "Answer."}}
execution: {num_repetitions: 1}
`, f.qaDataset(1), f.srv.URL, f.srv.URL)
		cfg, err := config.Parse([]byte(yaml), "run.yaml", f.dir, os.Getenv)
		if err != nil {
			t.Fatal(err)
		}
		run := f.launch(cfg)
		if _, err := f.m.Execute(context.Background(), run.ID); err != nil {
			t.Fatal(err)
		}
		results, _ := f.db.Results(context.Background(), run.ID)
		if !strings.Contains(results[0].Error, "status 400") || !strings.Contains(results[0].Error, "[redacted]") {
			t.Errorf("the error should keep the body's start and say where the key was: %q", results[0].Error)
		}
		if parts := storedParts(t, f, run.ID, key); len(parts) > 0 {
			t.Errorf("parts of the key stored: %q in %q", parts, results[0].Error)
		}
	})
	t.Run("a command's stderr", func(t *testing.T) {
		f := newFixture(t, rubricJudge())
		// 2048 bytes of stderr are kept, from its end: the key's first bytes fall before them.
		script := agentScript(t, `printf '%s' "$SERVICE_TOKEN" >&2; head -c 2040 /dev/zero | tr '\0' y >&2; exit 1`)
		yaml := fmt.Sprintf(`dataset: {path: %q}
agent: {type: command, command: [%s], env: {SERVICE_TOKEN: "${ASSAY_TEST_KEY}"}}
judge: {model: judge-model, base_url: %q}
conditions: {baseline: {system_prompt: "Answer."}}
execution: {num_repetitions: 1, retry: {max_attempts: 1}}
`, f.qaDataset(1), script, f.srv.URL)
		cfg, err := config.Parse([]byte(yaml), "run.yaml", f.dir, os.Getenv)
		if err != nil {
			t.Fatal(err)
		}
		run := f.launch(cfg)
		if _, err := f.m.Execute(context.Background(), run.ID); err != nil {
			t.Fatal(err)
		}
		results, _ := f.db.Results(context.Background(), run.ID)
		if !strings.Contains(results[0].Error, "yyyy") {
			t.Errorf("the error should quote the end of stderr: %q", results[0].Error)
		}
		if parts := storedParts(t, f, run.ID, key); len(parts) > 0 {
			t.Errorf("parts of the key stored: %q in %q", parts, results[0].Error)
		}
		if st, _ := f.db.Run(context.Background(), run.ID); st.Status == store.RunRunning {
			t.Errorf("run still %s", st.Status)
		}
	})
}

// A run file cannot give a judge's key to the agent under test, by name in
// Claude Code's list or by reference in a command agent's env: the run is
// refused before it starts, naming the variable. The agent may read the
// variable when it is its own key as well.
func TestTheJudgesKeyIsNotGivenToTheAgent(t *testing.T) {
	t.Setenv("JUDGE_KEY", "sk-judge-0123456789")
	f := newFixture(t, rubricJudge())
	claude := agentScript(t, "exit 0")
	for _, c := range []struct{ agent, refusal string }{
		{fmt.Sprintf(`{type: claude_code, command: [%s], env: [CLOUD_ML_REGION, JUDGE_KEY]}`, claude), "agent.env.JUDGE_KEY: passes JUDGE_KEY, the judge's key"},
		{fmt.Sprintf(`{type: command, command: [%s], env: {SERVICE: "Bearer ${JUDGE_KEY}"}}`, claude), "agent.env.SERVICE: passes JUDGE_KEY, the judge's key"},
		{fmt.Sprintf(`{type: claude_code, command: [%s], api_key_env: JUDGE_KEY, env: [JUDGE_KEY]}`, claude), ""},
		{fmt.Sprintf(`{type: command, command: [%s], env: {REGION: "${CLOUD_ML_REGION:-eu}"}}`, claude), ""},
	} {
		yaml := fmt.Sprintf(`dataset: {path: %q}
agent: %s
judge: {model: judge-model, base_url: %q, api_key_env: JUDGE_KEY}
conditions: {baseline: {system_prompt: "Answer."}}
`, f.qaDataset(1), c.agent, f.srv.URL)
		cfg, err := config.Parse([]byte(yaml), "run.yaml", f.dir, os.Getenv)
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.m.CreateFromConfig(context.Background(), cfg)
		switch {
		case c.refusal == "" && err != nil:
			t.Errorf("%s: refused: %v", c.agent, err)
		case c.refusal != "" && (err == nil || !strings.Contains(err.Error(), c.refusal)):
			t.Errorf("%s: %v, want %q", c.agent, err, c.refusal)
		}
	}
}

// A model server on this machine needs no key: a run that names the
// provider's default key variable (as the run form does) runs without it
// when it is unset. A variable named on purpose is needed, and its refusal
// says how to set it, in words the run form takes.
func TestALocalServerRunsWithoutAKey(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	f := newFixture(t, rubricJudge())
	config1 := func(keyEnv string) *config.Config {
		yaml := fmt.Sprintf(`dataset: {path: %q}
agent: {type: openai, model: agent-model, base_url: %q, api_key_env: %s}
judge: {model: judge-model, base_url: %q, api_key_env: %s}
conditions: {baseline: {system_prompt: "Answer."}}
execution: {num_repetitions: 1}
`, f.qaDataset(2), f.srv.URL, keyEnv, f.srv.URL, keyEnv)
		cfg, err := config.Parse([]byte(yaml), "run.yaml", f.dir, os.Getenv)
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	run := f.launch(config1("OPENAI_API_KEY"))
	if _, err := f.m.Execute(context.Background(), run.ID); err != nil {
		t.Fatal(err)
	}
	results, _ := f.db.Results(context.Background(), run.ID)
	for _, r := range results {
		if r.Error != "" || len(r.Judgements) == 0 || r.Judgements[0].Error != "" {
			t.Errorf("a local server without a key: %+v", r)
		}
	}
	_, err := f.m.CreateFromConfig(context.Background(), config1("MY_MODEL_KEY"))
	if err == nil || !strings.Contains(err.Error(), "MY_MODEL_KEY (agent.api_key_env; judge.api_key_env)") ||
		!strings.Contains(err.Error(), "NAME=value assay serve") || strings.Contains(err.Error(), ":-") {
		t.Errorf("a variable named on purpose, unset: %v", err)
	}
}
