// Package proc starts agent and MCP server processes in their own process
// group, so that a whole tree can be killed at once, and keeps the end of
// what they write to stderr for error messages.
package proc

import (
	"assay/internal/redact"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Isolate makes cmd start as the leader of a new process group, killed by
// the kernel if the starting thread dies, so that a crash of assay leaves no
// server running.
func Isolate(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}

// KillGroup sends SIGKILL to the process group led by pid. A group that is
// already gone is not an error.
func KillGroup(pid int) {
	if pid > 0 {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
}

// baseEnv names the variables a child needs to find programs and write its
// caches, and nothing that could hold a secret.
var baseEnv = []string{"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "TZ"}

// MinimalEnv is the environment for a child that should not see the
// parent's secrets: the base variables from getenv, then extra on top.
func MinimalEnv(getenv func(string) string, extra map[string]string) []string {
	env := make(map[string]string, len(baseEnv)+len(extra))
	for _, k := range baseEnv {
		if v := getenv(k); v != "" {
			env[k] = v
		}
	}
	for k, v := range extra {
		env[k] = v
	}
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// Tail is an io.Writer that keeps the last Max bytes written to it. It is
// safe for concurrent use.
type Tail struct {
	Max int

	mu  sync.Mutex
	buf []byte
	cut bool // bytes before buf were dropped
}

// Write keeps the end of p.
func (t *Tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.Max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
		t.cut = true
	}
	return len(p), nil
}

// String returns what is kept, trimmed of surrounding space, beginning
// with redact.Mark when its beginning was dropped: the end of a secret
// there is then known for part of one.
func (t *Tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := strings.TrimSpace(strings.ToValidUTF8(string(t.buf), ""))
	if t.cut && s != "" {
		s = redact.Mark + s
	}
	return s
}

// Children returns the processes whose parent is pid, as "pid cmdline"
// strings; tests use it to prove nothing was left running.
func Children(pid int) ([]string, error) {
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	var out []string
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue // the process ended meanwhile
		}
		// The command name is in parentheses and may hold spaces: the
		// fields after its closing parenthesis are state, then ppid.
		rest := string(b[strings.LastIndexByte(string(b), ')')+1:])
		f := strings.Fields(rest)
		if len(f) < 2 || f[1] != strconv.Itoa(pid) {
			continue
		}
		dir := filepath.Dir(path)
		cmdline, _ := os.ReadFile(filepath.Join(dir, "cmdline"))
		out = append(out, filepath.Base(dir)+" ["+f[0]+"] "+strings.ReplaceAll(string(cmdline), "\x00", " "))
	}
	return out, nil
}

// Alive reports whether process pid exists and is not a zombie.
func Alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) > 0 && f[0] != "Z"
}
