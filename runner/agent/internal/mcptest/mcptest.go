// Package mcptest serves small MCP servers built with the SDK for tests:
// over streamable HTTP and SSE through httptest, and over stdio by
// re-running the test binary; and checks that a test leaves no child
// process running.
package mcptest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"assay"
	"assay/runner/agent/internal/proc"
)

// stdioEnv, set in a child's environment, makes Main serve a stdio server
// named by its value instead of running the tests.
const stdioEnv = "ASSAY_MCPTEST_STDIO"

// Main runs the tests, or the stdio server when the binary was started by
// StdioServer. Call it from TestMain.
func Main(m *testing.M) {
	if name := os.Getenv(stdioEnv); name != "" {
		s := NewServer(name, true)
		if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, "mcptest:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// EchoArgs are the arguments of the echo tool.
type EchoArgs struct {
	Message string `json:"message" jsonschema:"the text to echo"`
}

// SlowArgs are the arguments of the slow tool.
type SlowArgs struct {
	MS int `json:"ms" jsonschema:"how long to sleep, in milliseconds"`
}

// EnvArgs are the arguments of the getenv tool.
type EnvArgs struct {
	Name string `json:"name" jsonschema:"the variable to read"`
}

// NewServer returns a server with the tools echo ("name: message"), fail
// (always an error result), slow and pid; in a process of its own
// (process true) also getenv, spawn (starts a sleep and returns its pid)
// and crash (exits).
func NewServer(name string, process bool) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: name, Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes a message."}, func(_ context.Context, _ *mcp.CallToolRequest, in EchoArgs) (*mcp.CallToolResult, any, error) {
		return text(name + ": " + in.Message), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "Always fails."}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return nil, nil, errors.New("the fail tool always fails")
	})
	mcp.AddTool(s, &mcp.Tool{Name: "slow", Description: "Sleeps."}, func(ctx context.Context, _ *mcp.CallToolRequest, in SlowArgs) (*mcp.CallToolResult, any, error) {
		select {
		case <-time.After(time.Duration(in.MS) * time.Millisecond):
			return text("slept"), nil, nil
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	})
	mcp.AddTool(s, &mcp.Tool{Name: "pid", Description: "Returns the server's process id."}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return text(strconv.Itoa(os.Getpid())), nil, nil
	})
	if process {
		addProcessTools(s)
	}
	return s
}

// addProcessTools adds the tools that only make sense in a server process.
func addProcessTools(s *mcp.Server) {
	mcp.AddTool(s, &mcp.Tool{Name: "getenv", Description: "Reads an environment variable."}, func(_ context.Context, _ *mcp.CallToolRequest, in EnvArgs) (*mcp.CallToolResult, any, error) {
		return text(in.Name + "=" + os.Getenv(in.Name)), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "spawn", Description: "Starts a long sleep."}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		cmd := exec.Command("sleep", "300")
		if err := cmd.Start(); err != nil {
			return nil, nil, err
		}
		go func() { _ = cmd.Wait() }()
		return text(strconv.Itoa(cmd.Process.Pid)), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "crash", Description: "Exits at once."}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		os.Exit(3)
		return nil, nil, nil
	})
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// StdioServer returns a stdio server that runs this test binary as the
// server named name; the test package's TestMain must call Main.
func StdioServer(t testing.TB, name string) assay.MCPServer {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return assay.MCPServer{Name: name, Transport: assay.TransportStdio, Command: exe,
		// The race detector pauses a second at exit unless told not to.
		Env: map[string]string{stdioEnv: name, "GORACE": "atexit_sleep_ms=0"}}
}

// HTTPServer is an in-process server reached over HTTP.
type HTTPServer struct {
	// Config is the server as a condition names it.
	Config   assay.MCPServer
	sessions *sessionCount
}

// Sessions counts the sessions clients used.
func (s HTTPServer) Sessions() int {
	s.sessions.mu.Lock()
	defer s.sessions.mu.Unlock()
	return len(s.sessions.ids) + s.sessions.streams
}

// sessionCount counts sessions by their Mcp-Session-Id (streamable HTTP)
// or by their event stream (SSE).
type sessionCount struct {
	mu      sync.Mutex
	ids     map[string]bool
	streams int
}

// see counts the session r belongs to.
func (c *sessionCount) see(r *http.Request, transport assay.Transport) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if transport == assay.TransportSSE {
		if r.Method == http.MethodGet {
			c.streams++
		}
		return
	}
	if id := r.Header.Get("Mcp-Session-Id"); id != "" {
		c.ids[id] = true
	}
}

// ServeHTTP serves NewServer(name) over transport (http or sse) until the
// test ends. Requests whose headers differ from want are refused with 401.
func ServeHTTP(t testing.TB, name string, transport assay.Transport, want map[string]string) HTTPServer {
	t.Helper()
	s := NewServer(name, false)
	get := func(*http.Request) *mcp.Server { return s }
	var h http.Handler = mcp.NewStreamableHTTPHandler(get, nil)
	path := "/mcp"
	if transport == assay.TransportSSE {
		h, path = mcp.NewSSEHandler(get, nil), "/sse"
	}
	sessions := &sessionCount{ids: map[string]bool{}}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, v := range want {
			if r.Header.Get(k) != v {
				http.Error(w, "missing or wrong "+k, http.StatusUnauthorized)
				return
			}
		}
		sessions.see(r, transport)
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		// A client still holding its SSE stream open would make Close wait.
		ts.CloseClientConnections()
		ts.Close()
	})
	return HTTPServer{Config: assay.MCPServer{Name: name, Transport: transport, URL: ts.URL + path}, sessions: sessions}
}

// NoOrphans fails the test if, once it and its cleanups registered after
// this call are done, a child process of the test is still there. Call it
// first in a test.
func NoOrphans(t testing.TB) {
	t.Helper()
	t.Cleanup(func() {
		var left []string
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			var err error
			if left, err = proc.Children(os.Getpid()); err != nil {
				t.Errorf("list child processes: %v", err)
				return
			}
			if len(left) == 0 {
				return
			}
		}
		t.Errorf("child processes left running: %q", left)
	})
}

// Gone waits up to five seconds for process pid to end and fails the test
// if it does not.
func Gone(t testing.TB, pid int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if !proc.Alive(pid) {
			return
		}
	}
	t.Errorf("process %d still running", pid)
}
