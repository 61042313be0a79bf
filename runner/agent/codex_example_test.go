package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"assay"
	"assay/runner/agent"
)

// TestCodexExample runs examples/codex-agent.sh as a command agent with a
// stand-in codex that records what it was given: the condition's MCP servers
// arrive as -c settings, the question on stdin, and the final message is the
// answer.
func TestCodexExample(t *testing.T) {
	example, err := filepath.Abs("../../examples/codex-agent.sh")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	codex := script(t, `
for a in "$@"; do printf '%s\n' "$a"; done > `+dir+`/args
cat > `+dir+`/stdin
while [ $# -gt 0 ]; do
	if [ "$1" = --output-last-message ]; then printf 'Paris.\n' > "$2"; fi
	shift
done
echo "progress chatter"`)
	a := agent.NewCommand(agent.CommandOptions{
		Argv:    []string{example, "-m", "gpt-5-codex"},
		Env:     map[string]string{"CODEX": codex},
		Getenv:  env(map[string]string{"GRAPH_TOKEN": "g-123"}),
		Timeout: 20 * time.Second,
	})
	cond := assay.Condition{Name: "c", SystemPrompt: `Say "only" the city.`, MCPServers: []assay.MCPServer{
		{Name: "graph", Transport: assay.TransportStdio, Command: "/opt/graph-mcp", Args: []string{"--db", "kg"}, Env: map[string]string{"TOKEN": "${GRAPH_TOKEN}"}},
		{Name: "search-api", Transport: assay.TransportHTTP, URL: "https://search.example/mcp", Headers: map[string]string{"Authorization": "Bearer x"}},
	}}
	ans, err := a.Answer(context.Background(), agent.Task{Condition: cond, Prompt: "Capital of France?"})
	if err != nil {
		t.Fatal(err)
	}
	if ans.Content != "Paris." {
		t.Errorf("answer = %q, want the final message", ans.Content)
	}
	b, err := os.ReadFile(filepath.Join(dir, "args"))
	if err != nil {
		t.Fatal(err)
	}
	args := strings.Split(strings.TrimSpace(string(b)), "\n")
	for _, want := range []string{
		"exec", "-m", "gpt-5-codex",
		`mcp_servers.graph.command="/opt/graph-mcp"`,
		`mcp_servers.graph.args=["--db", "kg"]`,
		`mcp_servers.graph.env={"TOKEN" = "g-123"}`,
		`mcp_servers.search-api.url="https://search.example/mcp"`,
		`mcp_servers.search-api.http_headers={"Authorization" = "Bearer x"}`,
		`developer_instructions="Say \"only\" the city."`,
	} {
		if !slices.Contains(args, want) {
			t.Errorf("codex args lack %s:\n%s", want, b)
		}
	}
	if args[len(args)-1] != "-" {
		t.Errorf("codex should read the question from stdin (last argument -), got %q", args[len(args)-1])
	}
	if in, _ := os.ReadFile(filepath.Join(dir, "stdin")); string(in) != "Capital of France?" {
		t.Errorf("codex stdin = %q", in)
	}
}
