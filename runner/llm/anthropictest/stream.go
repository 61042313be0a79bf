package anthropictest

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// stream sends the answer as the API's server-sent events: message_start,
// for each block content_block_start, its deltas and content_block_stop,
// then message_delta with the stop reason and output tokens, and
// message_stop.
func (s *Server) stream(w http.ResponseWriter, req *Request, reply Reply) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	s.status(w, http.StatusOK)
	flush := func() {
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
	send := func(event string, data any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
		flush()
	}
	msg := message(req, reply)
	usage := msg["usage"].(Usage)
	start := map[string]any{}
	for k, v := range msg {
		start[k] = v
	}
	start["content"] = []any{}
	start["stop_reason"] = nil
	start["usage"] = Usage{InputTokens: usage.InputTokens, OutputTokens: 1,
		CacheCreationInputTokens: usage.CacheCreationInputTokens, CacheReadInputTokens: usage.CacheReadInputTokens}
	send("message_start", map[string]any{"type": "message_start", "message": start})
	send("ping", map[string]any{"type": "ping"})
	for i, b := range msg["content"].([]map[string]any) {
		switch b["type"] {
		case "text":
			send("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "text", "text": ""}})
			text := b["text"].(string)
			for len(text) > 0 {
				n := min(len(text), 16)
				send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
					"delta": map[string]any{"type": "text_delta", "text": text[:n]}})
				text = text[n:]
			}
		case "tool_use":
			send("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "tool_use", "id": b["id"], "name": b["name"], "input": map[string]any{}}})
			input, _ := json.Marshal(b["input"])
			send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": string(input)}})
		}
		send("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	send("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": msg["stop_reason"], "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": usage.OutputTokens}})
	send("message_stop", map[string]any{"type": "message_stop"})
}
