package mcptool

import (
	"fmt"
	"net/http"
	"os/exec"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"assay"
	"assay/runner/agent/internal/proc"
)

// stderrTail is how much of a stdio server's stderr is kept for errors.
const stderrTail = 2048

// transport builds the SDK transport for c's server and keeps what close
// needs to release it.
func (c *conn) transport(opts Options) (mcp.Transport, error) {
	s := c.srv
	switch s.Transport {
	case assay.TransportStdio, "":
		if s.Command == "" {
			return nil, fmt.Errorf("stdio server without a command")
		}
		cmd := exec.Command(s.Command, s.Args...)
		cmd.Env = proc.MinimalEnv(opts.Getenv, s.Env)
		c.stderr = &proc.Tail{Max: stderrTail}
		cmd.Stderr = c.stderr
		// A grandchild holding stderr open must not keep Wait waiting.
		cmd.WaitDelay = time.Second
		proc.Isolate(cmd)
		c.cmd = cmd
		return &mcp.CommandTransport{Command: cmd, TerminateDuration: closeGrace}, nil
	case assay.TransportHTTP:
		return &mcp.StreamableClientTransport{Endpoint: s.URL, HTTPClient: c.httpClient()}, nil
	case assay.TransportSSE:
		return &mcp.SSEClientTransport{Endpoint: s.URL, HTTPClient: c.httpClient()}, nil
	default:
		return nil, fmt.Errorf("unknown transport %q (want stdio, http or sse)", s.Transport)
	}
}

// httpClient returns a client of its own for the server, sending its
// headers with every request. It has no Timeout: the SSE stream lives as
// long as the session, and every call carries its own deadline.
func (c *conn) httpClient() *http.Client {
	c.http = http.DefaultTransport.(*http.Transport).Clone()
	return &http.Client{Transport: &headerTransport{base: c.http, headers: c.srv.Headers}}
}

// headerTransport adds fixed headers (Authorization and the like) to every
// request.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

// RoundTrip sends a copy of r with the headers set.
func (h *headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(h.headers) == 0 {
		return h.base.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	for k, v := range h.headers {
		r.Header.Set(k, v)
	}
	return h.base.RoundTrip(r)
}
