package llmtest

import (
	"encoding/json"

	openai "github.com/sashabaranov/go-openai"
)

// estimateUsage counts tokens the way a tokenizer roughly would, about
// four characters per token, plus the per-message overhead OpenAI bills,
// unless reply sets the numbers.
func estimateUsage(req *ChatRequest, reply Reply) openai.Usage {
	in, out := reply.PromptTokens, reply.CompletionTokens
	if in == 0 && req != nil {
		in = promptTokens(req)
	}
	if out == 0 {
		out = tokens(reply.Content)
		for _, c := range reply.ToolCalls {
			out += tokens(c.Function.Name) + tokens(c.Function.Arguments) + 3
		}
		out = max(out, 1)
	}
	u := openai.Usage{PromptTokens: in, CompletionTokens: out, TotalTokens: in + out}
	if reply.CachedTokens > 0 {
		u.PromptTokensDetails = &openai.PromptTokensDetails{CachedTokens: reply.CachedTokens}
	}
	return u
}

// promptTokens estimates the tokens of a request's messages and tools.
func promptTokens(req *ChatRequest) int {
	n := 3 // every reply is primed with <|start|>assistant<|message|>
	for _, m := range req.Messages {
		n += 4 + tokens(m.Role) + tokens(m.Content) + tokens(m.Name)
		for _, c := range m.ToolCalls {
			n += tokens(c.Function.Name) + tokens(c.Function.Arguments)
		}
	}
	if len(req.Tools) > 0 {
		b, _ := json.Marshal(req.Tools)
		n += tokens(string(b))
	}
	return n
}

// tokens estimates the tokens of s: one per four bytes, rounded up.
func tokens(s string) int {
	return (len(s) + 3) / 4
}
