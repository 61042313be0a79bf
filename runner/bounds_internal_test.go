package runner

import (
	"encoding/json"
	"strings"
	"testing"

	"assay"
	"assay/config"
	"assay/store"
)

// The secrets of a run are its keys and the secret-looking values its MCP
// servers and command agent are given; every text a result stores is cleaned
// of them, a key inside a longer secret included.
func TestEveryTextOfAResultIsCleanedOfTheRunsSecrets(t *testing.T) {
	env := map[string]string{"AGENT_KEY": "sk-agent-0123456789", "MCP_TOKEN": "ghp_mcp0123456789abcdef", "SHORT": "abc"}
	m := &Manager{opts: Options{Getenv: func(k string) string { return env[k] }}}
	spec := &config.Config{Agent: config.Agent{Type: config.AgentOpenAI, APIKeyEnv: "AGENT_KEY",
		Env: map[string]string{"SERVICE_PASSWORD": "hunter2-hunter2", "REGION": "europe-west4-a"}}}
	conds := []assay.Condition{{Name: "docs", MCPServers: []assay.MCPServer{{Name: "gh", Transport: assay.TransportHTTP,
		URL: "https://mcp.example/", Headers: map[string]string{"Authorization": "Bearer ${MCP_TOKEN}", "X-Short": "${SHORT}"}}}}}
	sc := m.secretsOf(spec, conds)
	for _, want := range []string{"sk-agent-0123456789", "ghp_mcp0123456789abcdef", "Bearer ghp_mcp0123456789abcdef", "hunter2-hunter2"} {
		if !strings.Contains(strings.Join(sc, "\n"), want) {
			t.Errorf("%q is not a secret of the run", want)
		}
	}
	if strings.Contains(strings.Join(sc, "\n"), "europe-west4") {
		t.Error("a value under a name that does not look secret was taken for one")
	}
	echo := "Bearer ghp_mcp0123456789abcdef / sk-agent-0123456789 / hunter2-hunter2"
	r := store.Result{Response: echo, Error: echo, Retries: []string{echo},
		ToolCalls: []store.ToolCall{{Tool: "echo", Arguments: json.RawMessage(`{"message": "sk-agent-0123456789"}`), Result: echo}},
		Judgements: []store.Judgement{{Raw: echo, Detail: echo, Error: echo, UnverifiedClaims: []string{echo},
			Scores: []store.Score{{Metric: "completeness", Value: 4, Reasoning: echo}}}}}
	retries := r.Retries
	sc.cleanResult(&r)
	all, _ := json.Marshal(r)
	for _, v := range []string{"ghp_", "sk-agent", "hunter2"} {
		if strings.Contains(string(all), v) {
			t.Errorf("%q left in %s", v, all)
		}
	}
	if want := "[redacted] / [redacted] / [redacted]"; r.Response != want || r.Judgements[0].Scores[0].Reasoning != want {
		t.Errorf("cleaned to %q", r.Response)
	}
	if !json.Valid(r.ToolCalls[0].Arguments) {
		t.Errorf("arguments no longer JSON: %s", r.ToolCalls[0].Arguments)
	}
	if retries[0] != echo {
		t.Error("the slice a result was given was written over")
	}
}
