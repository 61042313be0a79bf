package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"assay"
	"assay/runner/agent"
	"assay/runner/agent/internal/mcptest"
)

// script writes a /bin/sh script with body to a temporary folder and
// returns its path.
func script(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "agent.sh")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCommandAgentPassesTheTask(t *testing.T) {
	const prompt = `What is "$HOME"? Don't $(touch /tmp/x) * guess.`
	big := strings.Repeat("x", 200_000)
	tests := []struct {
		name   string
		body   string
		args   []string
		want   string
		prompt string // default prompt
	}{
		{"query as an argument", `printf '%s' "$2"`, []string{"--query", "{query}"}, prompt, ""},
		{"query inside an argument", `printf '%s' "$1"`, []string{"--prompt={query}"}, "--prompt=" + prompt, ""},
		{"query on stdin", `cat`, nil, prompt, ""},
		{"no stdin when the query is an argument", `printf '%s|' "$1"; cat`, []string{"{query}"}, prompt + "|", ""},
		{"system prompt", `printf '%s' "$2"`, []string{"--system-prompt", "{system_prompt}"}, "Answer briefly.", ""},
		{"variables", `printf '%s\n%s' "$ASSAY_QUERY" "$ASSAY_SYSTEM_PROMPT"`, nil, prompt + "\nAnswer briefly.", ""},
		{"output trimmed", `printf '\n  the answer \n\n'`, nil, "the answer", ""},
		{"large query on stdin", `wc -c | tr -d ' '`, nil, "200000", big},
		{"stdin left unread", `echo ok`, nil, "ok", big},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mcptest.NoOrphans(t)
			a := agent.NewCommand(agent.CommandOptions{Argv: append([]string{script(t, tt.body)}, tt.args...), Timeout: 10 * time.Second})
			p := prompt
			if tt.prompt != "" {
				p = tt.prompt
			}
			ans, err := a.Answer(context.Background(), agent.Task{Condition: assay.Condition{Name: "c", SystemPrompt: "Answer briefly."}, Prompt: p})
			if err != nil {
				t.Fatal(err)
			}
			if ans.Content != tt.want || ans.Attempts != 1 || ans.Latency <= 0 {
				t.Errorf("answer = %q (attempts %d, latency %s), want %q", ans.Content, ans.Attempts, ans.Latency, tt.want)
			}
		})
	}
}

func TestCommandAgentWritesTheMCPConfig(t *testing.T) {
	mcptest.NoOrphans(t)
	dir := t.TempDir()
	body := `printf '%s' "$1" > ` + dir + `/path; printf '%s' "$ASSAY_MCP_CONFIG" > ` + dir + `/env; stat -c %a "$1" > ` + dir + `/mode; cat "$1"`
	a := agent.NewCommand(agent.CommandOptions{
		Argv:   []string{script(t, body), "{mcp_config}"},
		Getenv: env(map[string]string{"TOOLS": "/opt/tools", "GRAPH_TOKEN": "g-123", "SEARCH_KEY": "s-456"}),
	})
	cond := assay.Condition{Name: "c", MCPServers: []assay.MCPServer{
		{Name: "graph", Transport: assay.TransportStdio, Command: "${TOOLS}/graph-mcp", Args: []string{"--db", "kg"}, Env: map[string]string{"TOKEN": "${GRAPH_TOKEN}"}},
		{Name: "bare", Transport: assay.TransportStdio, Command: "bare-mcp"},
		{Name: "search", Transport: assay.TransportSSE, URL: "http://localhost:8080/sse", Headers: map[string]string{"Authorization": "Bearer ${SEARCH_KEY}"}},
		{Name: "docs", Transport: assay.TransportHTTP, URL: "http://127.0.0.1:8001/mcp"},
	}}
	ans, err := a.Answer(context.Background(), agent.Task{Condition: cond, Prompt: "q"})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"mcpServers": {
		"graph": {"command": "/opt/tools/graph-mcp", "args": ["--db", "kg"], "env": {"TOKEN": "g-123"}},
		"bare": {"command": "bare-mcp", "args": []},
		"search": {"type": "sse", "url": "http://localhost:8080/sse", "headers": {"Authorization": "Bearer s-456"}},
		"docs": {"type": "http", "url": "http://127.0.0.1:8001/mcp"}}}`
	var got, exp any
	if err := json.Unmarshal([]byte(ans.Content), &got); err != nil {
		t.Fatalf("config %q: %v", ans.Content, err)
	}
	_ = json.Unmarshal([]byte(want), &exp)
	if !reflect.DeepEqual(got, exp) {
		t.Errorf("config = %s\nwant %s", ans.Content, want)
	}
	path, _ := os.ReadFile(filepath.Join(dir, "path"))
	envPath, _ := os.ReadFile(filepath.Join(dir, "env"))
	mode, _ := os.ReadFile(filepath.Join(dir, "mode"))
	if string(path) != string(envPath) || strings.TrimSpace(string(mode)) != "600" {
		t.Errorf("path %q, ASSAY_MCP_CONFIG %q, mode %q: want the same file, readable by the user only", path, envPath, mode)
	}
	if _, err := os.Stat(string(path)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("config file %q still there after the answer (err %v)", path, err)
	}
}

func TestCommandAgentKillsItsProcessGroup(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		timeout time.Duration
		cancel  time.Duration
		wantErr string
	}{
		{"timeout", `sleep 300 & echo $! > "$PIDFILE"; wait`, 300 * time.Millisecond, 0, "timed out after 300ms, its process group killed"},
		{"cancel", `sleep 300 & echo $! > "$PIDFILE"; wait`, 10 * time.Second, 300 * time.Millisecond, "cancelled, its process group killed"},
		{"left running after a good exit", `sleep 300 & echo $! > "$PIDFILE"; echo done`, 10 * time.Second, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mcptest.NoOrphans(t)
			pidfile := filepath.Join(t.TempDir(), "pid")
			a := agent.NewCommand(agent.CommandOptions{Argv: []string{script(t, tt.body)}, Timeout: tt.timeout,
				Env: map[string]string{"PIDFILE": pidfile}})
			ctx := context.Background()
			if tt.cancel > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.cancel)
				defer cancel()
			}
			start := time.Now()
			ans, err := a.Answer(ctx, agent.Task{Prompt: "q"})
			if elapsed := time.Since(start); elapsed > 5*time.Second {
				t.Errorf("answer took %s", elapsed)
			}
			switch {
			case tt.wantErr == "" && (err != nil || ans.Content != "done"):
				t.Errorf("answer, err = %+v, %v; want done", ans, err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("err = %v, want %q", err, tt.wantErr)
			}
			b, err := os.ReadFile(pidfile)
			if err != nil {
				t.Fatal(err)
			}
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatal(err)
			}
			mcptest.Gone(t, pid)
		})
	}
}

func TestCommandAgentReportsFailures(t *testing.T) {
	long := strings.Repeat("noise ", 1000)
	tests := []struct {
		name  string
		argv  func(t *testing.T) []string
		want  []string
		avoid string
	}{
		{"non-zero exit", func(t *testing.T) []string {
			return []string{script(t, `echo partial; echo "error: unknown flag --modle" >&2; exit 3`)}
		}, []string{"exit status 3", "error: unknown flag --modle"}, "partial"},
		{"stderr excerpt keeps the end", func(t *testing.T) []string {
			return []string{script(t, `printf '`+long+`' >&2; echo "the real reason" >&2; exit 1`)}
		}, []string{"exit status 1", "the real reason"}, ""},
		{"killed by a signal", func(t *testing.T) []string { return []string{script(t, `kill -9 $$`)} },
			[]string{"signal: killed", "nothing on stderr"}, ""},
		{"missing program", func(*testing.T) []string { return []string{"/nonexistent/agent", "{query}"} },
			[]string{"/nonexistent/agent", "no such file"}, ""},
		{"no program", func(*testing.T) []string { return nil }, []string{"no program"}, ""},
		{"an answer past the bound", func(t *testing.T) []string { return []string{script(t, `head -c 9000000 /dev/zero | tr '\0' x`)} },
			[]string{"more than 8 MiB on stdout"}, "xxxx"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mcptest.NoOrphans(t)
			_, err := agent.NewCommand(agent.CommandOptions{Argv: tt.argv(t)}).Answer(context.Background(), agent.Task{Prompt: "q"})
			for _, w := range tt.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("err = %v, want it to mention %q", err, w)
				}
			}
			if err != nil && (len(err.Error()) > 2300 || tt.avoid != "" && strings.Contains(err.Error(), tt.avoid)) {
				t.Errorf("err = %.300q… (%d bytes)", err, len(err.Error()))
			}
		})
	}
}

// The command sees the base variables, the ASSAY_* ones and what the
// run's config sets for it; none of assay's own, such as a judge's key.
func TestCommandAgentSeesOnlyItsEnvironment(t *testing.T) {
	t.Setenv("JUDGE_ONLY_KEY", "sk-judge-secret")
	t.Setenv("LANG", "C.UTF-8")
	a := agent.NewCommand(agent.CommandOptions{Argv: []string{script(t, `env | sort`)},
		Env: map[string]string{"ANTHROPIC_API_KEY": "sk-ant-agent"}})
	ans, err := a.Answer(context.Background(), agent.Task{Prompt: "q"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"PATH=", "HOME=", "LANG=C.UTF-8", "ASSAY_QUERY=q", "ANTHROPIC_API_KEY=sk-ant-agent"} {
		if !strings.Contains(ans.Content, want) {
			t.Errorf("the command's environment lacks %s:\n%s", want, ans.Content)
		}
	}
	if strings.Contains(ans.Content, "sk-judge-secret") {
		t.Errorf("the command sees a key it was not given:\n%s", ans.Content)
	}
}

// The MCP config a command reads lives in a folder only the user can enter;
// files that a killed process left there go at the next start.
func TestMCPConfigFilesArePrivateAndCleanedUp(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	cond := assay.Condition{Name: "c", MCPServers: []assay.MCPServer{{Name: "docs", Transport: assay.TransportHTTP,
		URL: "http://127.0.0.1:9/mcp", Headers: map[string]string{"Authorization": "Bearer ${DOCS_KEY}"}}}}
	a := agent.NewCommand(agent.CommandOptions{Argv: []string{script(t, `ls -ld "$(dirname "$1")" "$1" | cut -c1-10; echo "$1"`), "{mcp_config}"},
		Getenv: env(map[string]string{"DOCS_KEY": "s3cret"})})
	ans, err := a.Answer(context.Background(), agent.Task{Condition: cond, Prompt: "q"})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(ans.Content, "\n")
	if len(lines) != 3 || lines[0] != "drwx------" || lines[1] != "-rw-------" {
		t.Fatalf("modes of the folder and file: %q", lines)
	}
	if _, err := os.Stat(lines[2]); !os.IsNotExist(err) {
		t.Errorf("the config %s outlived the answer", lines[2])
	}
	dir := filepath.Dir(lines[2])
	dead := exec.Command("true")
	dead.Run()
	stale := filepath.Join(dir, strconv.Itoa(dead.Process.Pid)+"-1.json")
	mine := filepath.Join(dir, strconv.Itoa(os.Getpid())+"-1.json")
	os.WriteFile(stale, []byte(`{"secret": "s3cret"}`), 0o600)
	os.WriteFile(mine, []byte(`{}`), 0o600)
	if n := agent.CleanMCPConfigs(); n != 1 {
		t.Errorf("removed %d files, want the dead process's one", n)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Error("a dead process's config stayed")
	}
	if _, err := os.Stat(mine); err != nil {
		t.Error("a live process's config was removed")
	}
}
