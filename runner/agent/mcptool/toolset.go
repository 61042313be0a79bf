package mcptool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	openai "github.com/sashabaranov/go-openai"

	"assay"
	"assay/config"
	"assay/store"
)

// Toolset is the tools of one condition's servers as offered to a model
// for one task.
type Toolset struct {
	pool      *Pool
	condition string
	tools     []openai.Tool
	byName    map[string]toolRef
}

// toolRef is where a function name the model sees leads.
type toolRef struct {
	srv  assay.MCPServer // resolved
	tool string
}

// Toolset starts (or reuses) the servers of cond, resolving their ${ENV}
// references, and lists their tools. A server that cannot be resolved,
// started or listed is an error naming it.
func (p *Pool) Toolset(ctx context.Context, cond assay.Condition) (*Toolset, error) {
	servers := make([]assay.MCPServer, len(cond.MCPServers))
	for i, s := range cond.MCPServers {
		r, err := config.ResolveMCPServer(s, p.opts.Getenv)
		if err != nil {
			return nil, err
		}
		servers[i] = r
	}
	conns := make([]*conn, len(servers))
	errs := make([]error, len(servers))
	var wg sync.WaitGroup
	for i, s := range servers {
		wg.Go(func() { conns[i], errs[i] = p.get(ctx, cond.Name, s) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	ts := &Toolset{pool: p, condition: cond.Name, byName: map[string]toolRef{}}
	ts.offer(conns)
	return ts, nil
}

// offer names the tools of conns for the model: a tool keeps its own name
// unless another server has a tool of that name, then it becomes
// server__tool; names are made to fit OpenAI's ^[a-zA-Z0-9_-]{1,64}$.
func (ts *Toolset) offer(conns []*conn) {
	count := map[string]int{}
	for _, c := range conns {
		for _, t := range c.tools {
			count[t.Name]++
		}
	}
	for _, c := range conns {
		for _, t := range c.tools {
			name := t.Name
			if count[name] > 1 {
				name = c.srv.Name + "__" + name
			}
			name = ts.unique(functionName(name))
			ts.byName[name] = toolRef{srv: c.srv, tool: t.Name}
			ts.tools = append(ts.tools, openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
				Name: name, Description: description(t), Parameters: parameters(t.InputSchema),
			}})
		}
	}
}

// unique returns name, or name with a numeric suffix if it is taken.
func (ts *Toolset) unique(name string) string {
	if _, taken := ts.byName[name]; !taken {
		return name
	}
	for i := 2; ; i++ {
		suffix := fmt.Sprintf("_%d", i)
		n := name[:min(len(name), maxNameLen-len(suffix))] + suffix
		if _, taken := ts.byName[n]; !taken {
			return n
		}
	}
}

// Tools returns the functions to offer the model; nil when the condition
// has no tools.
func (ts *Toolset) Tools() []openai.Tool { return ts.tools }

// Names returns the function names offered, sorted.
func (ts *Toolset) Names() []string {
	names := make([]string, 0, len(ts.byName))
	for n := range ts.byName {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// description is what the model reads about a tool.
func description(t *mcp.Tool) string {
	if t.Description != "" {
		return t.Description
	}
	return t.Title
}

// parameters is the tool's input schema as a JSON object schema; OpenAI
// refuses an object schema without properties.
func parameters(schema any) json.RawMessage {
	// A copy: the schema belongs to the session's tool list, shared by
	// concurrent tasks.
	m := maps.Clone(schema.(map[string]any))
	if m == nil {
		m = map[string]any{}
	}
	if m["type"] == nil {
		m["type"] = "object"
	}
	if m["type"] == "object" && m["properties"] == nil {
		m["properties"] = map[string]any{}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return json.RawMessage(`{"type":"object","properties":{}}`)
	}
	return b
}

// Call runs the tool the model called as name with arguments (a JSON
// object as text). What the tool or the call did wrong — an unknown name,
// bad arguments, an error result, a failed or timed-out call — comes back
// in the Call for the model to read, with Trace.IsError set. The error is
// for what ends the task: ctx ending, or the server failing to (re)start.
func (ts *Toolset) Call(ctx context.Context, name, arguments string) (Call, error) {
	ref, ok := ts.byName[name]
	call := Call{Trace: store.ToolCall{Server: ref.srv.Name, Tool: ref.tool, Arguments: rawArguments(arguments)}}
	if !ok {
		call.Trace.Tool = name
		return call.failed(ctx, fmt.Sprintf("unknown tool %q; the tools are: %s", name, strings.Join(ts.Names(), ", "))), nil
	}
	args, err := decodeArguments(arguments)
	if err != nil {
		return call.failed(ctx, err.Error()), nil
	}
	c, err := ts.pool.get(ctx, ts.condition, ref.srv)
	if err != nil {
		return call, err
	}
	timeout := ts.pool.opts.CallTimeout
	callCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	res, err := c.session.CallTool(callCtx, &mcp.CallToolParams{Name: ref.tool, Arguments: args})
	call.Trace.DurationMS = float64(time.Since(start).Microseconds()) / 1000
	switch {
	case ctx.Err() != nil:
		return call, fmt.Errorf("mcp server %s: tool %s: %w", ref.srv.Name, ref.tool, ctx.Err())
	case callCtx.Err() != nil:
		return call.failed(ctx, fmt.Sprintf("tool call timed out after %s", timeout)), nil
	case err != nil:
		c.noteFailure(err)
		return call.failed(ctx, "tool call failed: "+err.Error()), nil
	}
	return call.done(ctx, render(res), res.IsError), nil
}

// rawArguments keeps the model's arguments for the trace as JSON: as they
// are when valid, else as a JSON string.
func rawArguments(s string) json.RawMessage {
	if strings.TrimSpace(s) == "" {
		return json.RawMessage("{}")
	}
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	b, _ := json.Marshal(s)
	return b
}

// decodeArguments parses the model's arguments, which must be a JSON object.
func decodeArguments(s string) (map[string]any, error) {
	args := map[string]any{}
	if strings.TrimSpace(s) == "" {
		return args, nil
	}
	if err := json.Unmarshal([]byte(s), &args); err != nil {
		return nil, fmt.Errorf("the arguments are not a JSON object: %v", err)
	}
	return args, nil
}
