package config

import (
	"encoding/json"
	"fmt"
	"maps"
	"strings"
)

// redactedValue replaces a literal value that looks like a secret.
const redactedValue = "[redacted]"

// secretWords mark an MCP env or header name whose literal value is withheld.
var secretWords = []string{"auth", "token", "key", "secret", "password", "passwd", "cookie", "credential", "session"}

// Redacted returns the config as indented JSON, the snapshot a run keeps and
// pages and exports show. It holds no secret:
//   - API keys are never in a config, only the names of their variables;
//   - every string value that came from a ${...} reference is written as the
//     reference, not its value (so a model name read from the environment
//     appears as ${MODEL}: write it literally to have it recorded);
//   - MCP server values keep their references, and a literal env or header
//     value under a name that looks secret (Authorization, *_TOKEN, *_KEY…)
//     is written as [redacted].
//
// A literal secret elsewhere, such as a token in agent.command, cannot be
// recognised: write it as a ${...} reference.
func (c *Config) Redacted() ([]byte, error) {
	s := *c.withReferences()
	servers := make([]MCPServer, len(s.MCPServers))
	for i, srv := range s.MCPServers {
		srv.Env = redactLiterals(srv.Env)
		srv.Headers = redactLiterals(srv.Headers)
		servers[i] = srv
	}
	s.MCPServers = servers
	s.Agent.Env = redactLiterals(s.Agent.Env)
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode config: %w", err)
	}
	return b, nil
}

// redactLiterals copies m, withholding literal values of secret-looking names.
// A value holding a ${...} reference is kept: the reference names a variable,
// it is not the secret.
func redactLiterals(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := maps.Clone(m)
	for name, v := range out {
		if v != "" && !strings.Contains(v, "${") && LooksSecret(name) {
			out[name] = redactedValue
		}
	}
	return out
}

// LooksSecret says whether a variable or header of this name holds a secret
// (Authorization, *_TOKEN, *_KEY…).
func LooksSecret(name string) bool {
	lower := strings.ToLower(name)
	for _, w := range secretWords {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return false
}
