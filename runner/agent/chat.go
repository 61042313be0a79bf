package agent

import (
	"context"
	"fmt"

	openai "github.com/sashabaranov/go-openai"

	"assay/runner/llm"
)

// Chat is an OpenAI-compatible model answering in one call, without tools.
type Chat struct {
	Client *llm.Client
}

var _ Agent = (*Chat)(nil)

// Answer asks the model once, with the condition's system prompt.
func (c *Chat) Answer(ctx context.Context, t Task) (*Answer, error) {
	var msgs []openai.ChatCompletionMessage
	if t.Condition.SystemPrompt != "" {
		msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: t.Condition.SystemPrompt})
	}
	msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: t.Prompt})
	resp, err := c.Client.Chat(ctx, llm.Request{Messages: msgs})
	if err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	return &Answer{
		Content:   resp.Content,
		TokensIn:  resp.TokensIn,
		TokensOut: resp.TokensOut,
		Latency:   resp.Latency,
		Attempts:  resp.Attempts,
		Retries:   resp.Retries,
		Model:     c.Client.Model(),
	}, nil
}

// Close does nothing: a chat agent holds no resources.
func (c *Chat) Close() error { return nil }
