// Package mcptool connects an agent to the MCP servers of a condition: it
// starts them lazily, keeps one session per (condition, server) shared by
// concurrent tasks, restarts a server that died, offers the servers' tools
// as OpenAI functions and executes the model's calls against them.
package mcptool

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"assay"
)

// Defaults applied by NewPool to zero fields of Options.
const (
	DefaultStartTimeout = 60 * time.Second
	DefaultCallTimeout  = 60 * time.Second
)

// ErrClosed is returned by a pool that has been closed.
var ErrClosed = errors.New("mcp pool closed")

// Options configure a Pool. Zero fields take defaults.
type Options struct {
	// Getenv resolves ${ENV} references in server values and gives stdio
	// servers PATH, HOME and the like; nil uses os.Getenv.
	Getenv func(string) string
	// StartTimeout bounds starting a server, its handshake and its tool list.
	StartTimeout time.Duration
	// CallTimeout is the deadline of one tool call.
	CallTimeout time.Duration
	Logger      *slog.Logger
}

// Pool holds the MCP sessions of one agent. Sessions are keyed by
// (condition, server): concurrent tasks under one condition share a session
// (the SDK multiplexes calls over it), while two conditions never share
// server state. Close shuts every session down. A Pool is safe for
// concurrent use.
type Pool struct {
	opts   Options
	ctx    context.Context // cancelled by Close: aborts starts in progress
	cancel context.CancelFunc
	wg     sync.WaitGroup // starts and background closes

	mu     sync.Mutex
	closed bool
	conns  map[connKey]*conn
}

// connKey identifies a session: one server of one condition. The server's
// resolved configuration is part of it, so that two runs sharing an agent
// with a condition of the same name never share a server set up otherwise.
type connKey struct{ condition, server, config string }

// keyOf is the key of srv (resolved) under condition.
func keyOf(condition string, srv assay.MCPServer) connKey {
	b, _ := json.Marshal(srv)
	sum := sha256.Sum256(b)
	return connKey{condition, srv.Name, string(sum[:])}
}

// NewPool returns an empty pool; servers start on first use.
func NewPool(opts Options) *Pool {
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = DefaultStartTimeout
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = DefaultCallTimeout
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Pool{opts: opts, ctx: ctx, cancel: cancel, conns: map[connKey]*conn{}}
}

// get returns the live session of srv (already resolved) under condition,
// starting it, or restarting it if it died, and waits for it to be ready
// or for ctx to end.
func (p *Pool) get(ctx context.Context, condition string, srv assay.MCPServer) (*conn, error) {
	k := keyOf(condition, srv)
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, ErrClosed
	}
	c := p.conns[k]
	if c != nil && c.broken() {
		delete(p.conns, k)
		p.closeLater(c)
		c = nil
	}
	if c == nil {
		c = newConn(srv)
		p.conns[k] = c
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			c.start(p.ctx, p.opts)
		}()
	}
	p.mu.Unlock()
	select {
	case <-c.ready:
	case <-ctx.Done():
		return nil, fmt.Errorf("mcp server %s: waiting for start: %w", srv.Name, ctx.Err())
	}
	if c.err != nil {
		return nil, c.err
	}
	return c, nil
}

// closeLater shuts a dead or failed session down without making the
// caller wait; Close waits for it. p.mu must be held.
func (p *Pool) closeLater(c *conn) {
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		<-c.ready
		c.close()
	}()
}

// Close shuts every session down: stdio servers are asked to exit, then
// killed with their whole process group; HTTP sessions are ended. Starts
// in progress are aborted. Close waits until all of it is done; later
// calls return ErrClosed.
func (p *Pool) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	conns := p.conns
	p.conns = nil
	p.mu.Unlock()

	p.cancel()
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Go(func() {
			<-c.ready
			c.close()
		})
	}
	wg.Wait()
	p.wg.Wait()
	return nil
}
