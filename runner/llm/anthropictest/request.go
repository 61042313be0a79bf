package anthropictest

import (
	"encoding/json"
	"strings"
)

// SystemText is the system prompt's text, its blocks joined.
func (r *Request) SystemText() string {
	return textOf(r.System)
}

// LastUser is the text of the last user message, its text blocks joined
// (tool results left out).
func (r *Request) LastUser() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return textOf(r.Messages[i].Content)
		}
	}
	return ""
}

// ToolResults are the tool_result blocks of the last user message.
func (r *Request) ToolResults() []Block {
	if len(r.Messages) == 0 {
		return nil
	}
	last := r.Messages[len(r.Messages)-1]
	var out []Block
	for _, b := range blocks(last.Content) {
		if b.Type == "tool_result" {
			out = append(out, b)
		}
	}
	return out
}

// HasTool reports whether a tool of that name is offered.
func (r *Request) HasTool(name string) bool {
	for _, t := range r.Tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

// ToolNames lists the names of the tools offered.
func (r *Request) ToolNames() []string {
	out := make([]string, len(r.Tools))
	for i, t := range r.Tools {
		out[i] = t.Name
	}
	return out
}

// blocks reads content that is a string or a list of blocks.
func blocks(raw json.RawMessage) []Block {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []Block{{Type: "text", Text: s}}
	}
	var out []Block
	_ = json.Unmarshal(raw, &out)
	return out
}

func textOf(raw json.RawMessage) string {
	var parts []string
	for _, b := range blocks(raw) {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// ResultText is a tool_result block's content as text, without the
// <system-reminder> notes Claude Code adds for its model.
func (b Block) ResultText() string {
	text := textOf(b.Content)
	if i := strings.Index(text, "<system-reminder>"); i >= 0 {
		text = text[:i]
	}
	return strings.TrimSpace(text)
}
