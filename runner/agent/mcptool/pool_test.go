package mcptool_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"assay"
	"assay/runner/agent/internal/mcptest"
	"assay/runner/agent/internal/proc"
	"assay/runner/agent/mcptool"
	"assay/store"
)

func TestMain(m *testing.M) { mcptest.Main(m) }

// env is a getenv over a fixed map.
func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// newPool returns a pool closed when the test ends.
func newPool(t *testing.T, opts mcptool.Options) *mcptool.Pool {
	t.Helper()
	if opts.Getenv == nil {
		opts.Getenv = env(map[string]string{"PATH": "/usr/bin:/bin"})
	}
	p := mcptool.NewPool(opts)
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return p
}

// call runs one tool call that must not end the task.
func call(t *testing.T, ts *mcptool.Toolset, name, args string) mcptool.Call {
	t.Helper()
	c, err := ts.Call(context.Background(), name, args)
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	return c
}

func TestToolsetOverEachTransport(t *testing.T) {
	tests := []struct {
		name   string
		server func(t *testing.T) assay.MCPServer
	}{
		{"stdio", func(t *testing.T) assay.MCPServer { return mcptest.StdioServer(t, "docs") }},
		{"streamable http", func(t *testing.T) assay.MCPServer {
			return mcptest.ServeHTTP(t, "docs", assay.TransportHTTP, nil).Config
		}},
		{"sse", func(t *testing.T) assay.MCPServer {
			return mcptest.ServeHTTP(t, "docs", assay.TransportSSE, nil).Config
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mcptest.NoOrphans(t)
			srv := tt.server(t)
			p := newPool(t, mcptool.Options{})
			ts, err := p.Toolset(context.Background(), assay.Condition{Name: "with_docs", MCPServers: []assay.MCPServer{srv}})
			if err != nil {
				t.Fatal(err)
			}
			names := strings.Join(ts.Names(), ",")
			if !strings.Contains(names, "echo") || !strings.Contains(names, "fail") {
				t.Errorf("tools = %s, want echo and fail among them", names)
			}
			c := call(t, ts, "echo", `{"message":"hello"}`)
			want := store.ToolCall{Server: "docs", Tool: "echo", Arguments: json.RawMessage(`{"message":"hello"}`), Result: "docs: hello"}
			c.Trace.DurationMS = 0
			if c.Content != "docs: hello" || !equalCalls(c.Trace, want) {
				t.Errorf("call = %q, %+v; want %q, %+v", c.Content, c.Trace, "docs: hello", want)
			}
		})
	}
}

func equalCalls(a, b store.ToolCall) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

func TestClashingToolNamesAreQualified(t *testing.T) {
	mcptest.NoOrphans(t)
	a := mcptest.ServeHTTP(t, "alpha", assay.TransportHTTP, nil).Config
	b := mcptest.ServeHTTP(t, "beta", assay.TransportSSE, nil).Config
	p := newPool(t, mcptool.Options{})
	ts, err := p.Toolset(context.Background(), assay.Condition{Name: "both", MCPServers: []assay.MCPServer{a, b}})
	if err != nil {
		t.Fatal(err)
	}
	names := strings.Join(ts.Names(), ",")
	for _, want := range []string{"alpha__echo", "beta__echo", "beta__fail"} {
		if !strings.Contains(names, want) {
			t.Errorf("tools = %s, want %s among them", names, want)
		}
	}
	if c := call(t, ts, "beta__echo", `{"message":"x"}`); c.Content != "beta: x" || c.Trace.Server != "beta" || c.Trace.Tool != "echo" {
		t.Errorf("beta__echo = %q, %+v", c.Content, c.Trace)
	}
}

func TestToolFailuresGoBackToTheModel(t *testing.T) {
	mcptest.NoOrphans(t)
	srv := mcptest.ServeHTTP(t, "docs", assay.TransportHTTP, nil).Config
	p := newPool(t, mcptool.Options{CallTimeout: 300 * time.Millisecond})
	ts, err := p.Toolset(context.Background(), assay.Condition{Name: "c", MCPServers: []assay.MCPServer{srv}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, tool, args, want string
	}{
		{"error result", "fail", `{}`, "the fail tool always fails"},
		{"unknown tool", "search", `{}`, `unknown tool "search"`},
		{"arguments not JSON", "echo", `{"message":`, "not a JSON object"},
		{"arguments not an object", "echo", `["a"]`, "not a JSON object"},
		{"invalid arguments", "echo", `{"message": 3}`, "message"},
		{"timeout", "slow", `{"ms": 5000}`, "timed out after 300ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := call(t, ts, tt.tool, tt.args)
			if !c.Trace.IsError || !strings.Contains(c.Content, tt.want) || !strings.Contains(c.Trace.Result, tt.want) {
				t.Errorf("call = %q, %+v; want an error mentioning %q", c.Content, c.Trace, tt.want)
			}
			if !json.Valid(c.Trace.Arguments) {
				t.Errorf("trace arguments %q are not JSON", c.Trace.Arguments)
			}
		})
	}
}

func TestHeadersAndEnvAreResolved(t *testing.T) {
	mcptest.NoOrphans(t)
	srv := mcptest.ServeHTTP(t, "secure", assay.TransportHTTP, map[string]string{"Authorization": "Bearer s3cret"}).Config
	srv.Headers = map[string]string{"Authorization": "Bearer ${TOKEN}"}
	p := newPool(t, mcptool.Options{Getenv: env(map[string]string{"TOKEN": "s3cret"})})
	ts, err := p.Toolset(context.Background(), assay.Condition{Name: "c", MCPServers: []assay.MCPServer{srv}})
	if err != nil {
		t.Fatal(err)
	}
	if c := call(t, ts, "echo", `{"message":"in"}`); c.Content != "secure: in" {
		t.Errorf("echo = %q", c.Content)
	}
}

func TestStdioServerSeesAMinimalEnvironment(t *testing.T) {
	mcptest.NoOrphans(t)
	srv := mcptest.StdioServer(t, "envy")
	srv.Env["GREETING"] = "${GREETING_SRC}"
	parent := map[string]string{"PATH": "/usr/bin:/bin", "HOME": "/home/eval", "OPENAI_API_KEY": "sk-secret", "GREETING_SRC": "hello"}
	p := newPool(t, mcptool.Options{Getenv: env(parent)})
	ts, err := p.Toolset(context.Background(), assay.Condition{Name: "c", MCPServers: []assay.MCPServer{srv}})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"GREETING": "hello", "PATH": "/usr/bin:/bin", "HOME": "/home/eval", "OPENAI_API_KEY": ""} {
		if c := call(t, ts, "getenv", `{"name":"`+name+`"}`); c.Content != name+"="+want {
			t.Errorf("getenv %s = %q, want %q", name, c.Content, name+"="+want)
		}
	}
}

func TestServerThatCannotStartIsNamed(t *testing.T) {
	tests := []struct {
		name   string
		server assay.MCPServer
		want   []string
	}{
		{"missing command", assay.MCPServer{Name: "ghost", Transport: assay.TransportStdio, Command: "/nonexistent/mcp-server"},
			[]string{"mcp server ghost", "no such file"}},
		{"server exits", assay.MCPServer{Name: "quitter", Transport: assay.TransportStdio, Command: "/bin/sh", Args: []string{"-c", "echo cannot open database >&2; exit 1"}},
			[]string{"mcp server quitter", "cannot open database"}},
		{"nobody listening", assay.MCPServer{Name: "down", Transport: assay.TransportHTTP, URL: "http://127.0.0.1:1/mcp"},
			[]string{"mcp server down", "connect"}},
		{"unset variable", assay.MCPServer{Name: "keyless", Transport: assay.TransportHTTP, URL: "http://127.0.0.1:1/mcp", Headers: map[string]string{"X-Key": "${NO_SUCH_KEY}"}},
			[]string{"mcp server keyless", "NO_SUCH_KEY"}},
		{"never answers", assay.MCPServer{Name: "mute", Transport: assay.TransportStdio, Command: "sleep", Args: []string{"300"}},
			[]string{"mcp server mute", "no answer within 500ms"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mcptest.NoOrphans(t)
			timeout := 10 * time.Second
			if tt.server.Name == "mute" {
				timeout = 500 * time.Millisecond
			}
			p := newPool(t, mcptool.Options{StartTimeout: timeout})
			_, err := p.Toolset(context.Background(), assay.Condition{Name: "c", MCPServers: []assay.MCPServer{tt.server}})
			for _, w := range tt.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("err = %v, want it to mention %q", err, w)
				}
			}
		})
	}
}

func TestConcurrentTasksShareOneSession(t *testing.T) {
	mcptest.NoOrphans(t)
	httpSrv := mcptest.ServeHTTP(t, "remote", assay.TransportHTTP, nil)
	cond := assay.Condition{Name: "c", MCPServers: []assay.MCPServer{mcptest.StdioServer(t, "local"), httpSrv.Config}}
	p := newPool(t, mcptool.Options{})
	pids := make([]string, 8)
	var wg sync.WaitGroup
	for i := range pids {
		wg.Go(func() {
			ts, err := p.Toolset(context.Background(), cond)
			if err != nil {
				t.Error(err)
				return
			}
			c, err := ts.Call(context.Background(), "local__pid", "")
			if err != nil {
				t.Error(err)
				return
			}
			pids[i] = c.Content
			if _, err := ts.Call(context.Background(), "remote__echo", `{"message":"x"}`); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	for _, pid := range pids[1:] {
		if pid != pids[0] {
			t.Errorf("stdio server pids = %v, want one server for all tasks", pids)
			break
		}
	}
	if n := httpSrv.Sessions(); n != 1 {
		t.Errorf("http sessions = %d, want 1", n)
	}
}

func TestServersSetUpDifferentlyAreNotShared(t *testing.T) {
	mcptest.NoOrphans(t)
	p := newPool(t, mcptool.Options{})
	for _, flavour := range []string{"salty", "sweet"} {
		srv := mcptest.StdioServer(t, "local")
		srv.Env["FLAVOUR"] = flavour
		ts, err := p.Toolset(context.Background(), assay.Condition{Name: "c", MCPServers: []assay.MCPServer{srv}})
		if err != nil {
			t.Fatal(err)
		}
		if c := call(t, ts, "getenv", `{"name":"FLAVOUR"}`); c.Content != "FLAVOUR="+flavour {
			t.Errorf("getenv = %q, want FLAVOUR=%s from a server of its own", c.Content, flavour)
		}
	}
}

func TestDeadServerIsRestartedOnNextUse(t *testing.T) {
	mcptest.NoOrphans(t)
	p := newPool(t, mcptool.Options{})
	cond := assay.Condition{Name: "c", MCPServers: []assay.MCPServer{mcptest.StdioServer(t, "fragile")}}
	ts, err := p.Toolset(context.Background(), cond)
	if err != nil {
		t.Fatal(err)
	}
	first := pid(t, call(t, ts, "pid", ""))
	if c := call(t, ts, "crash", ""); !c.Trace.IsError {
		t.Errorf("crash = %+v, want an error result", c.Trace)
	}
	mcptest.Gone(t, first)
	var second int
	for deadline := time.Now().Add(5 * time.Second); second == 0 && time.Now().Before(deadline); {
		// The session may not know yet that its server died: the first
		// call after the crash can fail; a later one restarts the server.
		if c := call(t, ts, "pid", ""); !c.Trace.IsError {
			second = pid(t, c)
		}
	}
	if second == 0 || second == first {
		t.Errorf("pid after crash = %d, first %d: want a new server", second, first)
	}
}

func TestCloseKillsTheServersProcessGroup(t *testing.T) {
	mcptest.NoOrphans(t)
	p := mcptool.NewPool(mcptool.Options{Getenv: env(map[string]string{"PATH": "/usr/bin:/bin"})})
	ts, err := p.Toolset(context.Background(), assay.Condition{Name: "c", MCPServers: []assay.MCPServer{mcptest.StdioServer(t, "parent")}})
	if err != nil {
		t.Fatal(err)
	}
	server := pid(t, call(t, ts, "pid", ""))
	sleeper := pid(t, call(t, ts, "spawn", ""))
	if !proc.Alive(sleeper) {
		t.Fatalf("the server's child %d is not running", sleeper)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	mcptest.Gone(t, server)
	mcptest.Gone(t, sleeper)
	if _, err := p.Toolset(context.Background(), assay.Condition{Name: "c", MCPServers: []assay.MCPServer{mcptest.StdioServer(t, "parent")}}); !errors.Is(err, mcptool.ErrClosed) {
		t.Errorf("toolset after close: err = %v, want ErrClosed", err)
	}
}

func pid(t *testing.T, c mcptool.Call) int {
	t.Helper()
	n, err := strconv.Atoi(c.Content)
	if err != nil {
		t.Fatalf("not a pid: %q (%+v)", c.Content, c.Trace)
	}
	return n
}
