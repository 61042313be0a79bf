package web

import (
	"strings"

	"github.com/labstack/echo/v4"

	"assay"
)

// conditionFromForm builds a condition from the posted form, naming the server
// and line of any field it cannot read.
func conditionFromForm(c echo.Context) (*assay.Condition, error) {
	f := formFromPost(c)
	cond := &assay.Condition{
		Name:                  strings.TrimSpace(f.Name),
		SystemPrompt:          f.SystemPrompt,
		RequireMCPToolUse:     f.RequireMCPToolUse,
		RequireMCPToolSuccess: f.RequireMCPToolSuccess,
		MCPServers:            []assay.MCPServer{},
	}
	for i, sf := range f.Servers {
		srv := assay.MCPServer{Name: strings.TrimSpace(sf.Name), Transport: assay.Transport(sf.Transport)}
		if srv.Transport == assay.TransportStdio {
			srv.Command = strings.TrimSpace(sf.Command)
			srv.Args = lines(sf.Args)
			env, err := parsePairs(sf.Env, "=", i, "environment")
			if err != nil {
				return nil, err
			}
			srv.Env = env
		} else {
			srv.URL = strings.TrimSpace(sf.URL)
			headers, err := parsePairs(sf.Headers, ":", i, "headers")
			if err != nil {
				return nil, err
			}
			srv.Headers = headers
		}
		cond.MCPServers = append(cond.MCPServers, srv)
	}
	return cond, nil
}

// lines splits text into its non-blank lines, trimmed.
func lines(text string) []string {
	out := []string{}
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// parsePairs reads "KEY<sep>value" lines.
func parsePairs(text, sep string, server int, field string) (map[string]string, error) {
	out := map[string]string{}
	for n, l := range strings.Split(text, "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		k, v, ok := strings.Cut(l, sep)
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, assay.Errorf(assay.EINVALID, "MCP server %d: %s, line %d: %q is not of the form NAME%svalue", server+1, field, n+1, strings.TrimSpace(l), sep)
		}
		out[k] = strings.TrimSpace(v)
	}
	return out, nil
}
