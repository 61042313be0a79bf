package mcptool

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"assay"
	"assay/runner/agent/internal/proc"
)

// closeGrace is how long a stdio server may take to exit once its stdin is
// closed before its process group is killed.
const closeGrace = 2 * time.Second

// conn is one session with one server. Its fields are set by start before
// ready is closed and not changed afterwards, except dead.
type conn struct {
	srv   assay.MCPServer
	ready chan struct{}
	err   error // why the start failed

	session *mcp.ClientSession
	tools   []*mcp.Tool
	cancel  context.CancelFunc // ends the transport's lifetime context
	cmd     *exec.Cmd          // stdio only
	stderr  *proc.Tail         // stdio only
	http    *http.Transport    // http and sse only
	dead    atomic.Bool        // the session ended or broke
}

func newConn(srv assay.MCPServer) *conn {
	return &conn{srv: srv, ready: make(chan struct{})}
}

// broken reports whether the session cannot be used any more: its start
// failed or it ended. A conn still starting is not broken.
func (c *conn) broken() bool {
	select {
	case <-c.ready:
		return c.err != nil || c.dead.Load()
	default:
		return false
	}
}

// start connects, lists the tools and closes ready. It gives up after
// opts.StartTimeout or when pool is cancelled.
func (c *conn) start(pool context.Context, opts Options) {
	defer close(c.ready)
	// The transport keeps the context it connects with for the session's
	// lifetime (the SSE stream is a request under it), so it must outlive
	// the start; the timer and the pool only cut it short while starting.
	life, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	timedOut := atomic.Bool{}
	timer := time.AfterFunc(opts.StartTimeout, func() { timedOut.Store(true); cancel() })
	stopPool := context.AfterFunc(pool, cancel)
	begin := time.Now()
	err := c.connect(life, opts)
	timer.Stop()
	stopPool()
	switch {
	case err != nil && timedOut.Load():
		err = fmt.Errorf("no answer within %s: %w", opts.StartTimeout, err)
	case err != nil && pool.Err() != nil:
		err = fmt.Errorf("start aborted: %w", ErrClosed)
	case err == nil && (timedOut.Load() || pool.Err() != nil):
		err = errors.New("start aborted")
	}
	if err != nil {
		c.err = c.describe(err)
		c.close()
		opts.Logger.Warn("mcp server failed to start", "server", c.srv.Name, "transport", c.srv.Transport, "error", c.err)
		return
	}
	go func() {
		_ = c.session.Wait()
		c.dead.Store(true)
	}()
	opts.Logger.Info("mcp server started", "server", c.srv.Name, "transport", c.srv.Transport,
		"tools", len(c.tools), "pid", c.pid(), "duration_ms", time.Since(begin).Milliseconds())
}

// connect opens the session over the server's transport and lists its tools.
func (c *conn) connect(ctx context.Context, opts Options) error {
	t, err := c.transport(opts)
	if err != nil {
		return err
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "assay", Version: "1"}, nil)
	cs, err := client.Connect(ctx, t, nil)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	c.session = cs
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return fmt.Errorf("list tools: %w", err)
		}
		c.tools = append(c.tools, tool)
	}
	return nil
}

// describe names the server in err and adds what a stdio server wrote to
// stderr, where the reason for a failed start usually is.
func (c *conn) describe(err error) error {
	if c.stderr != nil {
		if tail := c.stderr.String(); tail != "" {
			return &startError{fmt.Errorf("mcp server %s: %w; stderr: %s", c.srv.Name, err, tail)}
		}
	}
	return &startError{fmt.Errorf("mcp server %s: %w", c.srv.Name, err)}
}

// ErrStart is found by errors.Is in the error of a server that did not start.
var ErrStart = errors.New("mcp server did not start")

// startError is a server's failed start.
type startError struct{ err error }

func (e *startError) Error() string        { return e.err.Error() }
func (e *startError) Unwrap() error        { return e.err }
func (e *startError) Is(target error) bool { return target == ErrStart }

// close ends the session and, for stdio, kills the server's process group
// once it has had closeGrace to exit on its own.
func (c *conn) close() {
	done := make(chan struct{})
	go func() {
		defer close(done)
		if c.session != nil {
			_ = c.session.Close()
		}
	}()
	select {
	case <-done:
	case <-time.After(closeGrace + time.Second):
	}
	proc.KillGroup(c.pid())
	<-done
	if c.cancel != nil {
		c.cancel()
	}
	if c.http != nil {
		c.http.CloseIdleConnections()
	}
	c.dead.Store(true)
}

// pid is the stdio server's process id, 0 when there is none.
func (c *conn) pid() int {
	if c.cmd == nil || c.cmd.Process == nil {
		return 0
	}
	return c.cmd.Process.Pid
}

// noteFailure marks the session dead when err says the connection is gone,
// so the next use restarts the server.
func (c *conn) noteFailure(err error) {
	if errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, mcp.ErrSessionMissing) {
		c.dead.Store(true)
	}
}
