package config

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"assay"
)

// env is a getenv over a fixed map.
func env(vars map[string]string) func(string) string {
	return func(name string) string { return vars[name] }
}

func TestExpand(t *testing.T) {
	getenv := env(map[string]string{"HOST": "example.com", "PORT": "8080", "EMPTY": ""})
	tests := []struct {
		in, want string
		wantErr  string
	}{
		{in: "plain", want: "plain"},
		{in: "${HOST}", want: "example.com"},
		{in: "http://${HOST}:${PORT}/mcp", want: "http://example.com:8080/mcp"},
		{in: "${MISSING:-fallback}", want: "fallback"},
		{in: "${HOST:-fallback}", want: "example.com"},
		{in: "${EMPTY:-used when empty}", want: "used when empty"},
		{in: "${MISSING:-}", want: ""},
		{in: "costs $5 and $HOST", want: "costs $5 and $HOST"},
		{in: "literal $${HOST}", want: "literal ${HOST}"},
		{in: "${MISSING}", wantErr: "environment variable MISSING is not set"},
		{in: "${EMPTY}", wantErr: "environment variable EMPTY is not set"},
		{in: "${HOST", wantErr: "unclosed reference"},
		{in: "${1BAD}", wantErr: "bad reference ${1BAD}"},
		{in: "${}", wantErr: "bad reference"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := Expand(tt.in, getenv)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("Expand(%q) err = %v, want %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("Expand(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
	if _, err := Expand("${MISSING}", getenv); !errors.Is(err, ErrUnsetVariable) {
		t.Errorf("err = %v, want ErrUnsetVariable", err)
	}
}

const withEnv = `name: ${RUN_NAME:-nightly}
dataset:
  path: ${DATA_DIR}/q.jsonl
agent:
  type: openai
  model: ${AGENT_MODEL}
  base_url: ${BASE_URL:-http://localhost:11434/v1}
  api_key_env: LOCAL_KEY
judge:
  model: j
mcp_servers:
  search:
    type: sse
    url: https://${SEARCH_HOST}/sse
    headers:
      Authorization: Bearer ${SEARCH_API_KEY}
  graph:
    type: stdio
    command: ${TOOLS}/graph
    args: [--token, "${GRAPH_TOKEN}"]
    env: {GRAPH_TOKEN: "${GRAPH_TOKEN}", LOG_LEVEL: debug}
conditions:
  search:
    mcp_servers: [search, graph]
execution:
  num_repetitions: ${REPS:-2}
  max_concurrent: ${CONCURRENCY}
`

func TestConfigExpandsEnvOutsideMCPServers(t *testing.T) {
	vars := map[string]string{
		"DATA_DIR": "/data", "AGENT_MODEL": "qwen3", "CONCURRENCY": "8",
		"SEARCH_API_KEY": "s3cret", "SEARCH_HOST": "search.internal", "GRAPH_TOKEN": "g-token", "TOOLS": "/opt/tools",
	}
	c, err := Parse([]byte(withEnv), "run.yaml", "/evals", env(vars))
	if err != nil {
		t.Fatal(err)
	}
	got := []any{c.Name, c.Dataset.Path, c.Agent.Model, c.Agent.BaseURL, c.Execution.NumRepetitions, c.Execution.MaxConcurrent}
	want := []any{"nightly", "/data/q.jsonl", "qwen3", "http://localhost:11434/v1", 2, 8}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("expanded = %v, want %v", got, want)
	}

	// MCP server values keep their references until the run starts.
	conds := c.Conditions()
	search, graph := conds[0].MCPServers[0], conds[0].MCPServers[1]
	if search.URL != "https://${SEARCH_HOST}/sse" || search.Headers["Authorization"] != "Bearer ${SEARCH_API_KEY}" {
		t.Errorf("search = %+v, want references kept", search)
	}
	if graph.Command != "${TOOLS}/graph" || graph.Args[1] != "${GRAPH_TOKEN}" || graph.Env["GRAPH_TOKEN"] != "${GRAPH_TOKEN}" {
		t.Errorf("graph = %+v, want references kept", graph)
	}

	// ResolveMCPServer does the expansion at run start.
	resolved, err := ResolveMCPServer(search, env(vars))
	if err != nil {
		t.Fatal(err)
	}
	if resolved.URL != "https://search.internal/sse" || resolved.Headers["Authorization"] != "Bearer s3cret" {
		t.Errorf("resolved = %+v", resolved)
	}
	if search.Headers["Authorization"] != "Bearer ${SEARCH_API_KEY}" {
		t.Error("ResolveMCPServer changed its argument")
	}
	resolved, err = ResolveMCPServer(graph, env(vars))
	if err != nil || resolved.Command != "/opt/tools/graph" || resolved.Args[1] != "g-token" || resolved.Env["LOG_LEVEL"] != "debug" {
		t.Errorf("resolved = %+v, %v", resolved, err)
	}
}

func TestMCPReferencesNeedNoEnvAtLoad(t *testing.T) {
	vars := map[string]string{"DATA_DIR": "/data", "AGENT_MODEL": "qwen3", "CONCURRENCY": "8"}
	c, err := Parse([]byte(withEnv), "run.yaml", "/evals", env(vars))
	if err != nil {
		t.Fatalf("MCP server references must not be looked up at load: %v", err)
	}
	_, err = ResolveMCPServer(c.Conditions()[0].MCPServers[0], env(vars))
	if err == nil || !strings.Contains(err.Error(), "mcp server search: url: environment variable SEARCH_HOST is not set") {
		t.Errorf("err = %v", err)
	}
}

func TestResolveMCPServerKeepsNil(t *testing.T) {
	s := assay.MCPServer{Name: "x", Transport: assay.TransportStdio, Command: "x"}
	got, err := ResolveMCPServer(s, env(nil))
	if err != nil || !reflect.DeepEqual(got, s) {
		t.Errorf("got %+v, %v; want %+v", got, err, s)
	}
}

func TestReferencedNames(t *testing.T) {
	got := ReferencedNames("Bearer ${JUDGE_KEY} $${LITERAL} ${REGION:-eu} ${bad name} ${OPEN")
	if want := []string{"JUDGE_KEY", "REGION"}; !slices.Equal(got, want) {
		t.Errorf("ReferencedNames = %q, want %q", got, want)
	}
}
