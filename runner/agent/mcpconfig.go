package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"assay"
	"assay/config"
)

// MCPConfig renders servers in the JSON format Claude Code's --mcp-config
// reads (and Cursor, Claude Desktop and others share):
//
//	{"mcpServers": {"name": {"command": …, "args": […], "env": {…}},
//	                "other": {"type": "http", "url": …, "headers": {…}}}}
//
// with ${ENV} references resolved by getenv. The result holds secrets.
func MCPConfig(servers []assay.MCPServer, getenv func(string) string) ([]byte, error) {
	out := make(map[string]map[string]any, len(servers))
	for _, s := range servers {
		r, err := config.ResolveMCPServer(s, getenv)
		if err != nil {
			return nil, err
		}
		out[r.Name] = mcpConfigEntry(r)
	}
	b, err := json.MarshalIndent(map[string]any{"mcpServers": out}, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode mcp config: %w", err)
	}
	return b, nil
}

// mcpConfigEntry is one server's entry.
func mcpConfigEntry(s assay.MCPServer) map[string]any {
	if s.Transport == assay.TransportHTTP || s.Transport == assay.TransportSSE {
		e := map[string]any{"type": string(s.Transport), "url": s.URL}
		if len(s.Headers) > 0 {
			e["headers"] = s.Headers
		}
		return e
	}
	args := s.Args
	if args == nil {
		args = []string{}
	}
	e := map[string]any{"command": s.Command, "args": args}
	if len(s.Env) > 0 {
		e["env"] = s.Env
	}
	return e
}

// mcpConfigDir is where a command's MCP config files go: a folder only the
// user can enter, one per user, which start-up clears of the files of dead
// processes (CleanMCPConfigs). A file holds the condition's ${ENV} values
// resolved, so none outlives its process for long, not even after a kill.
func mcpConfigDir() (string, error) {
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("assay-mcp-%d", os.Getuid()))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("mcp config folder: %w", err)
	}
	info, err := os.Lstat(dir)
	if err != nil {
		return "", fmt.Errorf("mcp config folder: %w", err)
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if !info.IsDir() || (ok && int(st.Uid) != os.Getuid()) {
		return "", fmt.Errorf("mcp config folder %s is not a folder of this user's", dir)
	}
	if info.Mode().Perm() != 0o700 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return "", fmt.Errorf("mcp config folder: %w", err)
		}
	}
	return dir, nil
}

// writeMCPConfig writes MCPConfig to a new file only the user can read, in
// mcpConfigDir, named after this process, and returns its path; the caller
// removes it.
func writeMCPConfig(servers []assay.MCPServer, getenv func(string) string) (string, error) {
	b, err := MCPConfig(servers, getenv)
	if err != nil {
		return "", err
	}
	dir, err := mcpConfigDir()
	if err != nil {
		return "", err
	}
	f, err := os.CreateTemp(dir, fmt.Sprintf("%d-*.json", os.Getpid()))
	if err != nil {
		return "", fmt.Errorf("write mcp config: %w", err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		os.Remove(f.Name())
		return "", fmt.Errorf("write mcp config: %w", err)
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("write mcp config: %w", err)
	}
	return f.Name(), nil
}

// CleanMCPConfigs removes the MCP config files that processes no longer
// running left behind (a killed assay cannot remove its own), and returns
// how many it removed.
func CleanMCPConfigs() int {
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("assay-mcp-%d", os.Getuid()))
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	removed := 0
	for _, e := range entries {
		pid, _, ok := strings.Cut(e.Name(), "-")
		n, err := strconv.Atoi(pid)
		if !ok || err != nil || processAlive(n) {
			continue
		}
		if os.Remove(filepath.Join(dir, e.Name())) == nil {
			removed++
		}
	}
	return removed
}

// processAlive reports whether a process of that id runs.
func processAlive(pid int) bool {
	return pid > 0 && !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
