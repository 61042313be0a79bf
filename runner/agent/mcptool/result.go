package mcptool

import (
	"assay/internal/redact"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"assay/store"
)

// Limits on what is kept of a tool result.
const (
	// ExcerptBytes bounds the result kept in the trace.
	ExcerptBytes = 2048
	// ContentBytes bounds the result the model reads, so that one huge
	// result cannot blow the context window.
	ContentBytes = 100_000
	// maxNameLen is OpenAI's limit on a function name.
	maxNameLen = 64
)

// Call is one executed tool call: what the model reads back and what the
// trace records. Trace.Turn is left for the caller to set.
type Call struct {
	Trace   store.ToolCall
	Content string
}

// failed makes c an error the model reads as msg.
func (c Call) failed(ctx context.Context, msg string) Call {
	return c.done(ctx, msg, true)
}

// done fills in the result text and error flag. The excerpt kept of it is
// cleaned of the run's secrets before it is cut (ctx carries them).
func (c Call) done(ctx context.Context, text string, isError bool) Call {
	if text == "" {
		text = "(the tool returned nothing)"
	}
	c.Content = Truncate(text, ContentBytes)
	c.Trace.Result = Truncate(redact.Text(ctx, text), ExcerptBytes)
	c.Trace.IsError = isError
	return c
}

// render turns a tool result into text for the model: text content as it
// is, other content described, structured content as JSON when there is
// nothing else.
func render(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		parts = append(parts, renderContent(c))
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		b, err := json.Marshal(res.StructuredContent)
		if err == nil {
			parts = append(parts, string(b))
		}
	}
	return strings.Join(parts, "\n")
}

// renderContent is one content block as text.
func renderContent(c mcp.Content) string {
	switch c := c.(type) {
	case *mcp.TextContent:
		return c.Text
	case *mcp.ImageContent:
		return fmt.Sprintf("[image %s, %d bytes]", c.MIMEType, len(c.Data))
	case *mcp.AudioContent:
		return fmt.Sprintf("[audio %s, %d bytes]", c.MIMEType, len(c.Data))
	case *mcp.ResourceLink:
		return fmt.Sprintf("[resource link %s: %s]", c.Name, c.URI)
	case *mcp.EmbeddedResource:
		if c.Resource == nil {
			return "[embedded resource]"
		}
		if c.Resource.Text != "" {
			return c.Resource.Text
		}
		return fmt.Sprintf("[resource %s %s, %d bytes]", c.Resource.URI, c.Resource.MIMEType, len(c.Resource.Blob))
	default:
		b, _ := json.Marshal(c)
		return string(b)
	}
}

// Truncate cuts s to at most n bytes on a character boundary, ending in
// " …[truncated]" when it was cut.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const mark = " …[truncated]"
	cut := max(n-len(mark), 0)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + mark
}

var badNameChars = regexp.MustCompile(`[^a-zA-Z0-9_-]`)

// functionName makes name fit OpenAI's ^[a-zA-Z0-9_-]{1,64}$: other
// characters become _, and a name too long keeps its start and a short hash
// of the whole, so that two long names stay apart.
func functionName(name string) string {
	n := badNameChars.ReplaceAllString(name, "_")
	if n == "" {
		n = "tool"
	}
	if len(n) > maxNameLen {
		sum := sha256.Sum256([]byte(name))
		n = n[:maxNameLen-9] + "_" + hex.EncodeToString(sum[:4])
	}
	return n
}
