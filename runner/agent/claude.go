package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"assay/runner/agent/mcptool"
	"assay/store"
)

// answerFromOutput turns a command's stdout into an answer. Output in
// Claude Code's --output-format json or stream-json (with --verbose) is
// read for the answer, the model, the tokens and — from stream-json — the
// MCP tool calls, so that guards and costs work for Claude Code as for the
// built-in agent; any other output is the answer as it is, trimmed.
func answerFromOutput(ans *Answer, servers []store.MCPServer) (*Answer, error) {
	ans.Content = strings.TrimSpace(ans.Content)
	events, ok := claudeEvents(ans.Content)
	if !ok {
		return ans, nil
	}
	var r claudeReader
	for _, e := range events {
		if err := r.read(e, servers); err != nil {
			return nil, fmt.Errorf("agent: claude code: %w", err)
		}
	}
	ans.Content = r.result
	ans.Model = r.model
	ans.ToolCalls = r.calls
	ans.TokensIn, ans.TokensOut = r.tokensIn, r.tokensOut
	return ans, nil
}

// claudeEvent is one line of Claude Code's JSON output, with the fields
// assay reads.
type claudeEvent struct {
	Type       string `json:"type"`
	Subtype    string `json:"subtype"`
	Model      string `json:"model"`
	MCPServers []struct {
		Name   string `json:"name"`
		Status string `json:"status"`
	} `json:"mcp_servers"`
	Message struct {
		ID      string         `json:"id"`
		Content []claudeBlock  `json:"content"`
		Usage   map[string]any `json:"usage"`
	} `json:"message"`
	Result    string                     `json:"result"`
	IsError   bool                       `json:"is_error"`
	Usage     map[string]any             `json:"usage"`
	ModelUsed map[string]json.RawMessage `json:"modelUsage"`
}

// claudeBlock is one content block of a message.
type claudeBlock struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// claudeEvents decodes out as Claude Code's output: one result object, a
// JSON array of events, or one event per line. ok is false unless every
// piece is an event and one of them is the result.
func claudeEvents(out string) (events []claudeEvent, ok bool) {
	if !strings.HasPrefix(out, "{") && !strings.HasPrefix(out, "[") {
		return nil, false
	}
	if strings.HasPrefix(out, "[") {
		if json.Unmarshal([]byte(out), &events) != nil {
			return nil, false
		}
	} else {
		for _, line := range strings.Split(out, "\n") {
			if line = strings.TrimSpace(line); line == "" {
				continue
			}
			var e claudeEvent
			if json.Unmarshal([]byte(line), &e) != nil || e.Type == "" {
				return nil, false
			}
			events = append(events, e)
		}
	}
	for _, e := range events {
		if e.Type == "result" {
			return events, true
		}
	}
	return nil, false
}

// claudeReader gathers an answer from events in order.
type claudeReader struct {
	model               string
	result              string
	tokensIn, tokensOut int
	calls               []store.ToolCall
	pending             map[string]int // tool_use id → index in calls
	turn                int
	lastMessage         string
}

// read takes in one event. A failed result, or an MCP server of the
// condition that Claude Code could not start, is an error.
func (r *claudeReader) read(e claudeEvent, servers []store.MCPServer) error {
	switch e.Type {
	case "system":
		if e.Model != "" {
			r.model = e.Model
		}
		for _, s := range e.MCPServers {
			if s.Status == "failed" && named(servers, s.Name) {
				return fmt.Errorf("mcp server %s failed to start", s.Name)
			}
		}
	case "assistant":
		r.assistant(e)
	case "user":
		r.toolResults(e.Message.Content)
	case "result":
		if e.IsError {
			return errors.New(strings.TrimSpace(e.Subtype + ": " + e.Result))
		}
		r.result = strings.TrimSpace(e.Result)
		r.tokensIn = count(e.Usage, "input_tokens") + count(e.Usage, "cache_creation_input_tokens") + count(e.Usage, "cache_read_input_tokens")
		r.tokensOut = count(e.Usage, "output_tokens")
		if r.model == "" && len(e.ModelUsed) == 1 {
			for m := range e.ModelUsed {
				r.model = m
			}
		}
	}
	return nil
}

// assistant records the MCP tool calls of an assistant message; each new
// message id is a new turn.
func (r *claudeReader) assistant(e claudeEvent) {
	if id := e.Message.ID; id == "" || id != r.lastMessage {
		r.turn++
		r.lastMessage = id
	}
	for _, b := range e.Message.Content {
		server, tool, ok := strings.Cut(strings.TrimPrefix(b.Name, "mcp__"), "__")
		if b.Type != "tool_use" || !strings.HasPrefix(b.Name, "mcp__") || !ok {
			continue
		}
		if r.pending == nil {
			r.pending = map[string]int{}
		}
		r.pending[b.ID] = len(r.calls)
		r.calls = append(r.calls, store.ToolCall{Turn: r.turn, Server: server, Tool: tool, Arguments: b.Input})
	}
}

// toolResults fills in the results of pending MCP tool calls.
func (r *claudeReader) toolResults(blocks []claudeBlock) {
	for _, b := range blocks {
		i, ok := r.pending[b.ToolUseID]
		if b.Type != "tool_result" || !ok {
			continue
		}
		delete(r.pending, b.ToolUseID)
		r.calls[i].Result = mcptool.Truncate(blockText(b.Content), mcptool.ExcerptBytes)
		r.calls[i].IsError = b.IsError
	}
}

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

// count reads a token count from a usage object.
func count(usage map[string]any, key string) int {
	n, _ := usage[key].(float64)
	return int(n)
}

// named reports whether servers has one called name.
func named(servers []store.MCPServer, name string) bool {
	for _, s := range servers {
		if s.Name == name {
			return true
		}
	}
	return false
}
