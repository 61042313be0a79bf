package assay

import (
	"regexp"
	"strings"
	"time"
)

// Transport is how assay reaches an MCP server.
type Transport string

// The MCP transports.
const (
	TransportStdio Transport = "stdio"
	TransportHTTP  Transport = "http"
	TransportSSE   Transport = "sse"
)

// MCPServer is one MCP server a condition offers the agent. Values may hold
// ${ENV} references, resolved only when a run starts.
type MCPServer struct {
	Name      string            `json:"name"`
	Transport Transport         `json:"transport"`
	Command   string            `json:"command,omitempty"`
	Args      []string          `json:"args,omitempty"`
	Env       map[string]string `json:"env,omitempty"`
	URL       string            `json:"url,omitempty"`
	Headers   map[string]string `json:"headers,omitempty"`
}

// Condition is a named context for the agent: a system prompt and MCP servers.
type Condition struct {
	ID                    int64       `json:"-"`
	Name                  string      `json:"name"`
	SystemPrompt          string      `json:"system_prompt"`
	MCPServers            []MCPServer `json:"mcp_servers"`
	RequireMCPToolUse     bool        `json:"require_mcp_tool_use"`
	RequireMCPToolSuccess bool        `json:"require_mcp_tool_success"`
	// Base and Model are set in the snapshot of a run over several models:
	// the run's condition is then one condition as one model answers it,
	// named "Base · Model".
	Base      string    `json:"base,omitempty"`
	Model     string    `json:"model,omitempty"`
	CreatedAt time.Time `json:"-"`
	UpdatedAt time.Time `json:"-"`
	CreatedBy string    `json:"-"` // the signed-in name of who made it; "" on an open server
}

var slugRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// ValidSlug reports whether s is a lowercase name of letters, digits, '-' and '_'.
func ValidSlug(s string) bool { return slugRE.MatchString(s) }

// Validate checks a condition and its MCP servers, naming the first field at fault.
func (c *Condition) Validate() error {
	if c.Name == "" {
		return Errorf(EINVALID, "name: required")
	}
	if !ValidSlug(c.Name) {
		return Errorf(EINVALID, "name: %q must be lowercase letters, digits, '-' or '_' (at most 64)", c.Name)
	}
	seen := map[string]bool{}
	for i := range c.MCPServers {
		s := &c.MCPServers[i]
		if err := s.Validate(); err != nil {
			return Errorf(EINVALID, "MCP server %d: %s", i+1, err.Error())
		}
		if seen[s.Name] {
			return Errorf(EINVALID, "MCP server %d: name: %q is used twice", i+1, s.Name)
		}
		seen[s.Name] = true
	}
	if c.RequireMCPToolSuccess && !c.RequireMCPToolUse {
		c.RequireMCPToolUse = true
	}
	if c.RequireMCPToolUse && len(c.MCPServers) == 0 {
		return Errorf(EINVALID, "require_mcp_tool_use: the condition has no MCP server to use")
	}
	return nil
}

// Validate checks one MCP server's fields for its transport.
func (s *MCPServer) Validate() error {
	if !ValidSlug(s.Name) {
		return Errorf(EINVALID, "name: %q must be lowercase letters, digits, '-' or '_'", s.Name)
	}
	switch s.Transport {
	case TransportStdio:
		if strings.TrimSpace(s.Command) == "" {
			return Errorf(EINVALID, "command: required for a stdio server")
		}
	case TransportHTTP, TransportSSE:
		u := strings.TrimSpace(s.URL)
		if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") && !strings.HasPrefix(u, "${") {
			return Errorf(EINVALID, "url: %q must start with http:// or https://", s.URL)
		}
	default:
		return Errorf(EINVALID, "transport: %q must be stdio, http or sse", s.Transport)
	}
	return nil
}
