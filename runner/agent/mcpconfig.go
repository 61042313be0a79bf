package agent

import (
	"encoding/json"
	"fmt"
	"os"

	"assay/runner/config"
	"assay/store"
)

// MCPConfig renders servers in the JSON format Claude Code's --mcp-config
// reads (and Cursor, Claude Desktop and others share):
//
//	{"mcpServers": {"name": {"command": …, "args": […], "env": {…}},
//	                "other": {"type": "http", "url": …, "headers": {…}}}}
//
// with ${ENV} references resolved by getenv. The result holds secrets.
func MCPConfig(servers []store.MCPServer, getenv func(string) string) ([]byte, error) {
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
func mcpConfigEntry(s store.MCPServer) map[string]any {
	if s.Transport == store.TransportHTTP || s.Transport == store.TransportSSE {
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

// writeMCPConfig writes MCPConfig to a new file only the user can read and
// returns its path; the caller removes it.
func writeMCPConfig(servers []store.MCPServer, getenv func(string) string) (string, error) {
	b, err := MCPConfig(servers, getenv)
	if err != nil {
		return "", err
	}
	f, err := os.CreateTemp("", "assay-mcp-*.json")
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
