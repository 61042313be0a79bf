package config

import (
	"encoding/json"
	"strings"
	"testing"
)

const withSecrets = `name: secrets
dataset:
  path: q.jsonl
agent:
  type: command
  command: [mycli, --token, "${CLI_TOKEN}", --model, "${MODEL}"]
judge:
  model: judge-1
  api_key_env: JUDGE_KEY
mcp_servers:
  search:
    type: http
    url: https://search/mcp
    headers:
      Authorization: Bearer ${SEARCH_API_KEY}
      X-Api-Key: literal-key-123
      X-Team: platform
  graph:
    type: stdio
    command: graph-mcp
    env: {GRAPH_PASSWORD: hunter2, LOG_LEVEL: debug}
conditions:
  search:
    mcp_servers: [search, graph]
`

func TestRedacted(t *testing.T) {
	vars := map[string]string{"CLI_TOKEN": "cli-s3cret", "MODEL": "m-7", "SEARCH_API_KEY": "search-s3cret", "JUDGE_KEY": "judge-s3cret"}
	c, err := Parse([]byte(withSecrets), "run.yaml", "/evals", env(vars))
	if err != nil {
		t.Fatal(err)
	}
	if c.Agent.Command[2] != "cli-s3cret" {
		t.Fatalf("command = %v, want it expanded for the run", c.Agent.Command)
	}
	out, err := c.Redacted()
	if err != nil {
		t.Fatal(err)
	}
	text := string(out)
	for _, secret := range []string{"cli-s3cret", "search-s3cret", "judge-s3cret", "literal-key-123", "hunter2"} {
		if strings.Contains(text, secret) {
			t.Errorf("snapshot holds %q:\n%s", secret, text)
		}
	}
	for _, kept := range []string{`"${CLI_TOKEN}"`, `"${MODEL}"`, `"Bearer ${SEARCH_API_KEY}"`, `"JUDGE_KEY"`,
		`"platform"`, `"debug"`, `"X-Api-Key": "[redacted]"`, `"GRAPH_PASSWORD": "[redacted]"`, `"path": "/evals/q.jsonl"`} {
		if !strings.Contains(text, kept) {
			t.Errorf("snapshot lacks %s:\n%s", kept, text)
		}
	}

	var back map[string]any
	if err := json.Unmarshal(out, &back); err != nil {
		t.Fatalf("snapshot is not JSON: %v", err)
	}
	if back["judge_sample_rate"] != 1.0 || back["execution"].(map[string]any)["num_repetitions"] != 3.0 {
		t.Errorf("snapshot lacks defaults: %v", back)
	}
	// Redacting must not touch the config the run uses.
	if c.MCPServers[1].Env["GRAPH_PASSWORD"] != "hunter2" {
		t.Errorf("Redacted changed the config: %v", c.MCPServers[1].Env)
	}
}

func TestRedactedOfAHandBuiltConfig(t *testing.T) {
	c := &Config{Name: "x", MCPServers: []MCPServer{{Name: "s", Headers: map[string]string{"Authorization": "Bearer abc"}}}}
	out, err := c.Redacted()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "abc") {
		t.Errorf("snapshot holds the header: %s", out)
	}
}
