package agent

import (
	"assay/internal/redact"
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"assay"
	"assay/runner/agent/mcptool"
	"assay/store"
)

// Claude Code prints, with --output-format json, one result object; with
// stream-json (and --verbose), one event per line: system events (init,
// permission_denied, …), the assistant's messages, the user turns that
// carry tool results, and a last result event with the answer, the usage
// and the cost. Events assay does not know, and lines that are not JSON,
// are passed over: a new kind of event never spoils an answer.

// claudeEvent is one event, with the fields assay reads. Message stays raw:
// it is an object in assistant and user events and a string in others.
type claudeEvent struct {
	Type       string `json:"type"`
	Subtype    string `json:"subtype"`
	Model      string `json:"model"`
	MCPServers []struct {
		Name   string `json:"name"`
		Status string `json:"status"`
	} `json:"mcp_servers"`
	Message        json.RawMessage            `json:"message"`
	Timestamp      time.Time                  `json:"timestamp"`
	Result         string                     `json:"result"`
	IsError        bool                       `json:"is_error"`
	APIErrorStatus int                        `json:"api_error_status"`
	TotalCostUSD   *float64                   `json:"total_cost_usd"`
	Usage          claudeUsage                `json:"usage"`
	ModelUsage     map[string]json.RawMessage `json:"modelUsage"`
	NumTurns       int                        `json:"num_turns"`
	// A permission_denied system event's tool and message.
	ToolName  string `json:"tool_name"`
	ToolUseID string `json:"tool_use_id"`
	// A result's denials: the tools Claude Code refused to run.
	PermissionDenials []struct {
		ToolName  string          `json:"tool_name"`
		ToolUseID string          `json:"tool_use_id"`
		ToolInput json.RawMessage `json:"tool_input"`
	} `json:"permission_denials"`
}

// claudeUsage is a result's token counts.
type claudeUsage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
}

// claudeMessage is the message of an assistant or user event.
type claudeMessage struct {
	ID      string        `json:"id"`
	Model   string        `json:"model"`
	Content []claudeBlock `json:"content"`
}

// claudeBlock is one content block of a message.
type claudeBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// claudeEventTypes are the event types that mark output as Claude Code's.
var claudeEventTypes = map[string]bool{"system": true, "assistant": true, "user": true, "result": true, "stream_event": true}

// isClaudeOutput reports whether out is Claude Code's JSON output: a JSON
// array of events, or lines whose first is an event.
func isClaudeOutput(out string) bool {
	if strings.HasPrefix(out, "[") {
		var events []claudeEvent
		return json.Unmarshal([]byte(out), &events) == nil && len(events) > 0 && claudeEventTypes[events[0].Type]
	}
	first, _, _ := strings.Cut(out, "\n")
	var e claudeEvent
	return json.Unmarshal([]byte(first), &e) == nil && claudeEventTypes[e.Type]
}

// claudeEvents splits Claude Code's output into events, passing over what
// is not one; skipped counts those lines.
func claudeEvents(out string) (events []claudeEvent, skipped int) {
	if strings.HasPrefix(out, "[") {
		_ = json.Unmarshal([]byte(out), &events)
		return events, 0
	}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 0, 64<<10), maxCommandOutput)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var e claudeEvent
		if json.Unmarshal([]byte(line), &e) != nil || e.Type == "" {
			skipped++
			continue
		}
		events = append(events, e)
	}
	return events, skipped
}

// claudeReader gathers an answer from events in order.
type claudeReader struct {
	ctx                 context.Context // carries the run's secrets, cleaned from excerpts before they are cut
	initModel, msgModel string
	result              *claudeEvent
	calls               []store.ToolCall
	pending             map[string]int       // tool_use id → index in calls
	started             map[string]time.Time // tool_use id → when the model asked for it
	asked               map[string]askedTool // tool_use id → any tool the model asked for
	denied              map[string]bool      // tool_use id → a denial recorded
	callAt              map[string]int       // tool_use id → index in calls, kept after its result
	turn                int
	lastMessage         string
	thought             string // the text of the turn's message before its first MCP tool call
	failedServer        string // a server of the condition that did not start
}

// askedTool is a tool the model asked for, MCP's or Claude Code's own.
type askedTool struct {
	turn  int
	name  string
	input json.RawMessage
}

// read takes in one event.
func (r *claudeReader) read(e claudeEvent, servers []assay.MCPServer) {
	switch e.Type {
	case "system":
		r.system(e, servers)
	case "assistant", "user":
		var m claudeMessage
		if json.Unmarshal(e.Message, &m) != nil {
			return
		}
		if e.Type == "assistant" {
			r.assistant(m, e.Timestamp)
		} else {
			r.toolResults(m.Content, e.Timestamp)
		}
	case "result":
		r.result = &e
		for _, d := range e.PermissionDenials {
			r.deny(d.ToolUseID, d.ToolName, d.ToolInput, "")
		}
	}
}

// deny records a tool Claude Code refused to run as a failed tool call
// marked denied, once: the MCP call already recorded, or a call of its own
// tools (Bash, Write, …), which are otherwise not recorded.
func (r *claudeReader) deny(id, name string, input json.RawMessage, message string) {
	if r.denied[id] && id != "" {
		return
	}
	if r.denied == nil {
		r.denied = map[string]bool{}
	}
	r.denied[id] = true
	if i, ok := r.callAt[id]; ok {
		c := &r.calls[i]
		c.Denied, c.IsError = true, true
		if message != "" {
			c.Result = r.excerpt(message)
		}
		return
	}
	asked := r.asked[id]
	if len(input) == 0 {
		input = asked.input
	}
	server, tool := "", cmpOr(name, asked.name)
	if srv, t, ok := strings.Cut(strings.TrimPrefix(tool, "mcp__"), "__"); ok && strings.HasPrefix(tool, "mcp__") {
		server, tool = srv, t
	}
	r.calls = append(r.calls, store.ToolCall{Turn: cmp.Or(asked.turn, r.turn), Server: server, Tool: tool, Arguments: input,
		Result: r.excerpt(message), IsError: true, Denied: true})
}

// system notes the model and the MCP servers that failed to start.
func (r *claudeReader) system(e claudeEvent, servers []assay.MCPServer) {
	if e.Subtype == "permission_denied" {
		var message string
		_ = json.Unmarshal(e.Message, &message)
		r.deny(e.ToolUseID, e.ToolName, nil, message)
		return
	}
	if e.Subtype != "init" {
		return
	}
	r.initModel = e.Model
	for _, s := range e.MCPServers {
		if s.Status == "failed" && named(servers, s.Name) && r.failedServer == "" {
			r.failedServer = s.Name
		}
	}
}

// assistant records the MCP tool calls of an assistant message; each new
// message id is a new turn.
func (r *claudeReader) assistant(m claudeMessage, at time.Time) {
	if m.ID == "" || m.ID != r.lastMessage {
		r.turn++
		r.lastMessage = m.ID
		r.thought = ""
	}
	if m.Model != "" && !strings.HasPrefix(m.Model, "<") { // "<synthetic>" marks Claude Code's own messages
		r.msgModel = m.Model
	}
	for _, b := range m.Content {
		if b.Type == "text" {
			r.thought = strings.TrimSpace(strings.TrimSpace(r.thought) + "\n" + b.Text)
			continue
		}
		if b.Type == "tool_use" {
			if r.asked == nil {
				r.asked = map[string]askedTool{}
			}
			r.asked[b.ID] = askedTool{turn: r.turn, name: b.Name, input: b.Input}
		}
		server, tool, ok := strings.Cut(strings.TrimPrefix(b.Name, "mcp__"), "__")
		if b.Type != "tool_use" || !strings.HasPrefix(b.Name, "mcp__") || !ok {
			continue
		}
		if r.pending == nil {
			r.pending = map[string]int{}
			r.started = map[string]time.Time{}
		}
		r.pending[b.ID] = len(r.calls)
		if r.callAt == nil {
			r.callAt = map[string]int{}
		}
		r.callAt[b.ID] = len(r.calls)
		r.started[b.ID] = at
		r.calls = append(r.calls, store.ToolCall{Turn: r.turn, Server: server, Tool: tool, Arguments: b.Input, Thought: r.excerpt(r.thought)})
		r.thought = "" // the turn's first call keeps it
	}
}

// toolResults fills in the results of pending MCP tool calls, and how long
// each took when the events carry their times.
func (r *claudeReader) toolResults(blocks []claudeBlock, at time.Time) {
	for _, b := range blocks {
		i, ok := r.pending[b.ToolUseID]
		if b.Type != "tool_result" || !ok {
			continue
		}
		delete(r.pending, b.ToolUseID)
		c := &r.calls[i]
		c.Result = r.excerpt(blockText(b.Content))
		c.IsError = b.IsError || c.Denied
		if start := r.started[b.ToolUseID]; !start.IsZero() && !at.IsZero() && at.After(start) {
			c.DurationMS = float64(at.Sub(start).Microseconds()) / 1000
		}
	}
}

// answer fills ans from what was read, or says why there is none.
func (r *claudeReader) answer(ans *Answer, skipped int) (*Answer, error) {
	ans.ToolCalls = r.calls
	ans.Model = r.model()
	if r.result == nil {
		ans.Content = ""
		return ans, fmt.Errorf("agent: claude code: its output ended without a result event (%d lines were not events)", skipped)
	}
	u := r.result.Usage
	ans.TokensIn = u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
	ans.TokensOut = u.OutputTokens
	ans.CacheReadTokens = u.CacheReadInputTokens
	ans.CacheWriteTokens = u.CacheCreationInputTokens
	ans.ReportedCostUSD = r.result.TotalCostUSD
	ans.Turns = r.result.NumTurns
	if r.result.IsError {
		ans.Content = ""
		return ans, &ModelError{Status: r.result.APIErrorStatus,
			Message: "agent: claude code: " + strings.TrimSpace(cmpOr(r.result.Result, r.result.Subtype))}
	}
	if r.failedServer != "" {
		ans.Content = ""
		return ans, fmt.Errorf("agent: claude code: mcp server %s failed to start: %w", r.failedServer, mcptool.ErrStart)
	}
	ans.Content = strings.TrimSpace(r.result.Result)
	return ans, nil
}

// model is the model that answered: the dated id its messages carry,
// else the one its usage names, else the one it started with.
func (r *claudeReader) model() string {
	if r.msgModel != "" {
		return r.msgModel
	}
	if r.result != nil && len(r.result.ModelUsage) == 1 {
		for m := range r.result.ModelUsage {
			return m
		}
	}
	return r.initModel
}

// excerpt is what a tool call keeps of text: cleaned of the run's secrets,
// then cut.
func (r *claudeReader) excerpt(text string) string {
	return mcptool.Truncate(redact.Text(r.ctx, text), mcptool.ExcerptBytes)
}

// readClaudeOutput turns Claude Code's output, held in ans.Content, into
// the answer: its text, model, tokens, cost and MCP tool calls.
func readClaudeOutput(ctx context.Context, ans *Answer, servers []assay.MCPServer) (*Answer, error) {
	events, skipped := claudeEvents(ans.Content)
	r := claudeReader{ctx: ctx}
	for _, e := range events {
		r.read(e, servers)
	}
	return r.answer(ans, skipped)
}

// ModelError is an error the agent's model API returned, as the agent
// reported it (Claude Code's is_error result with api_error_status).
type ModelError struct {
	Status  int // the API's HTTP status; 0 when the agent gave none
	Message string
}

func (e *ModelError) Error() string { return e.Message }

// blockText is a tool result's content: a string, or text blocks.
func blockText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var texts []string
	for _, p := range parts {
		if p.Type == "text" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// named reports whether servers has one called name.
func named(servers []assay.MCPServer, name string) bool {
	for _, s := range servers {
		if s.Name == name {
			return true
		}
	}
	return false
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
