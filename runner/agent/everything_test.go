package agent_test

import (
	"context"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"assay"
	"assay/internal/fixture"
	"assay/runner/agent"
	"assay/runner/agent/internal/mcptest"
	"assay/runner/agent/internal/proc"
)

// everything returns node and the reference MCP server's entry point.
func everything(t *testing.T) (node, script string) {
	t.Helper()
	return fixture.Everything(t)
}

// serveEverything starts the reference server in mode (streamableHttp or
// sse) on a free loopback port until the test ends and returns its URL.
func serveEverything(t *testing.T, mode string) string {
	t.Helper()
	node, script := everything(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	cmd := exec.Command(node, script, mode)
	cmd.Env = proc.MinimalEnv(os.Getenv, map[string]string{"PORT": port})
	stderr := &proc.Tail{Max: 4096}
	cmd.Stderr = stderr
	proc.Isolate(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		proc.KillGroup(cmd.Process.Pid)
		_ = cmd.Wait()
	})
	addr := net.JoinHostPort("127.0.0.1", port)
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("server-everything %s did not listen on %s: %s", mode, addr, stderr)
		}
	}
	if mode == "sse" {
		return "http://" + addr + "/sse"
	}
	return "http://" + addr + "/mcp"
}

func TestReferenceMCPServer(t *testing.T) {
	tests := []struct {
		name   string
		server func(t *testing.T) assay.MCPServer
	}{
		{"stdio", func(t *testing.T) assay.MCPServer {
			node, script := everything(t)
			return assay.MCPServer{Name: "everything", Transport: assay.TransportStdio, Command: node, Args: []string{script, "stdio"}}
		}},
		{"streamable http", func(t *testing.T) assay.MCPServer {
			return assay.MCPServer{Name: "everything", Transport: assay.TransportHTTP, URL: serveEverything(t, "streamableHttp")}
		}},
		{"sse", func(t *testing.T) assay.MCPServer {
			return assay.MCPServer{Name: "everything", Transport: assay.TransportSSE, URL: serveEverything(t, "sse")}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mcptest.NoOrphans(t)
			srv := tt.server(t)
			a, _ := newOpenAI(t, toolModel("echo", `{"message":"hello"}`), agent.OpenAIOptions{Getenv: os.Getenv})
			cond := assay.Condition{Name: "with_everything", MCPServers: []assay.MCPServer{srv}, RequireMCPToolUse: true, RequireMCPToolSuccess: true}
			ans, err := agent.Guarded(a, 3, 0).Answer(context.Background(), agent.Task{Condition: cond, Prompt: "Echo hello."})
			if err != nil {
				t.Fatal(err)
			}
			want := `[{"turn":1,"server":"everything","tool":"echo","arguments":{"message":"hello"},"result":"Echo: hello","is_error":false,"duration_ms":0}]`
			if got := trace(ans.ToolCalls); got != want {
				t.Errorf("tool calls = %s\nwant %s", got, want)
			}
			if ans.Content != "The tool said: Echo: hello" {
				t.Errorf("content = %q", ans.Content)
			}
		})
	}
}
