package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
	openai "github.com/sashabaranov/go-openai"
)

// DefaultAnthropicMaxTokens is the answer limit sent to the Messages API,
// which requires one, when the configuration sets none.
const DefaultAnthropicMaxTokens = 8192

// answerTool is the tool a structured answer is asked through: the Messages
// API has no response_format, so the request offers one tool whose input
// schema is the answer's and forces the model to call it.
const answerTool = "answer"

// newAnthropic returns the Messages API client for cfg: its key and base
// URL only (never the environment's), no retries of its own (Chat retries),
// no telemetry, through hc.
func newAnthropic(cfg Config, hc *doer) anthropic.Client {
	base := cfg.BaseURL
	if base == "" {
		base = "https://api.anthropic.com/"
	}
	opts := []option.RequestOption{
		option.WithAPIKey(cfg.APIKey),
		option.WithBaseURL(base),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(0),
		option.WithoutOpenTelemetry(),
	}
	if cfg.Vertex != nil {
		opts = append(opts, option.WithBaseURL(vertexBase(cfg)+"/"), option.WithMiddleware(vertexMessages(cfg.Vertex)))
	}
	return anthropic.NewClient(opts...)
}

// anthropicParams turns a chat request into a Messages API request: system
// messages become the system prompt, tool results user turns, a JSON schema
// answer a forced call of answerTool.
func (c *Client) anthropicParams(req Request) (anthropic.MessageNewParams, error) {
	p := anthropic.MessageNewParams{Model: anthropic.Model(c.cfg.Model), MaxTokens: int64(c.cfg.MaxTokens)}
	if p.MaxTokens <= 0 {
		p.MaxTokens = DefaultAnthropicMaxTokens
	}
	if t := c.cfg.Temperature; t != nil {
		p.Temperature = anthropic.Float(*t)
	}
	for _, m := range req.Messages {
		addAnthropicMessage(&p, m)
	}
	for _, t := range req.Tools {
		if t.Function == nil {
			continue
		}
		tool, err := anthropicTool(t.Function.Name, t.Function.Description, t.Function.Parameters)
		if err != nil {
			return p, err
		}
		p.Tools = append(p.Tools, anthropic.ToolUnionParam{OfTool: &tool})
	}
	if f := req.ResponseFormat; f != nil && f.JSONSchema != nil {
		tool, err := anthropicTool(answerTool, "Give your answer: its input is the whole answer, in the required shape.", f.JSONSchema.Schema)
		if err != nil {
			return p, err
		}
		p.Tools = append(p.Tools, anthropic.ToolUnionParam{OfTool: &tool})
		p.ToolChoice = anthropic.ToolChoiceUnionParam{OfTool: &anthropic.ToolChoiceToolParam{Name: answerTool}}
	}
	if c.cfg.CacheInstructions && len(p.System) > 0 {
		// The prefix up to here — the tools (a structured answer's schema)
		// and the system prompt — is read from the cache by later calls.
		p.System[len(p.System)-1].CacheControl = anthropic.NewCacheControlEphemeralParam()
	}
	return p, nil
}

// addAnthropicMessage adds a chat message to a Messages API request: a
// system message to the system prompt, an assistant's text and tool calls
// as its turn, tool results with the others of their turn in one user turn.
func addAnthropicMessage(p *anthropic.MessageNewParams, m openai.ChatCompletionMessage) {
	switch m.Role {
	case openai.ChatMessageRoleSystem, openai.ChatMessageRoleDeveloper:
		p.System = append(p.System, anthropic.TextBlockParam{Text: m.Content})
	case openai.ChatMessageRoleAssistant:
		var blocks []anthropic.ContentBlockParamUnion
		if strings.TrimSpace(m.Content) != "" {
			blocks = append(blocks, anthropic.NewTextBlock(m.Content))
		}
		for _, tc := range m.ToolCalls {
			input := json.RawMessage(tc.Function.Arguments)
			if !json.Valid(input) {
				input = json.RawMessage("{}")
			}
			blocks = append(blocks, anthropic.NewToolUseBlock(tc.ID, input, tc.Function.Name))
		}
		if len(blocks) > 0 {
			p.Messages = append(p.Messages, anthropic.NewAssistantMessage(blocks...))
		}
	case openai.ChatMessageRoleTool:
		block := anthropic.NewToolResultBlock(m.ToolCallID, m.Content, false)
		if n := len(p.Messages); n > 0 && p.Messages[n-1].Role == anthropic.MessageParamRoleUser && isToolResults(p.Messages[n-1]) {
			p.Messages[n-1].Content = append(p.Messages[n-1].Content, block)
		} else {
			p.Messages = append(p.Messages, anthropic.NewUserMessage(block))
		}
	default:
		p.Messages = append(p.Messages, anthropic.NewUserMessage(anthropic.NewTextBlock(m.Content)))
	}
}

func isToolResults(m anthropic.MessageParam) bool {
	return len(m.Content) > 0 && m.Content[0].OfToolResult != nil
}

// anthropicTool turns a JSON schema into a tool's input schema.
func anthropicTool(name, description string, schema any) (anthropic.ToolParam, error) {
	raw, err := json.Marshal(schema)
	if err != nil {
		return anthropic.ToolParam{}, fmt.Errorf("tool %s: schema: %w", name, err)
	}
	var fields map[string]any
	if string(raw) != "null" {
		if err := json.Unmarshal(raw, &fields); err != nil {
			return anthropic.ToolParam{}, fmt.Errorf("tool %s: schema is not an object: %w", name, err)
		}
	}
	in := anthropic.ToolInputSchemaParam{Properties: fields["properties"], ExtraFields: map[string]any{}}
	if in.Properties == nil {
		in.Properties = map[string]any{}
	}
	if req, ok := fields["required"].([]any); ok {
		for _, r := range req {
			if s, ok := r.(string); ok {
				in.Required = append(in.Required, s)
			}
		}
	}
	for k, v := range fields {
		if k != "properties" && k != "required" && k != "type" {
			in.ExtraFields[k] = v
		}
	}
	t := anthropic.ToolParam{Name: name, InputSchema: in}
	if description != "" {
		t.Description = anthropic.String(description)
	}
	return t, nil
}

// anthropicAttempt makes one Messages API call under its own deadline.
func (c *Client) anthropicAttempt(ctx context.Context, p anthropic.MessageNewParams, structured bool, seen *attempt) (*Response, *failure) {
	callCtx, cancel := context.WithTimeout(ctx, c.cfg.CallTimeout)
	defer cancel()
	msg, err := c.anth.Messages.New(withAttempt(callCtx, seen), p)
	if err != nil {
		var apiErr *anthropic.Error
		if errors.As(err, &apiErr) && ctx.Err() == nil && callCtx.Err() == nil {
			f := httpFailure(apiErr.StatusCode, anthropicMessage(ctx, apiErr), err)
			f.header = seen.header
			return nil, f
		}
		f := classify(ctx, callCtx, c.cfg.CallTimeout, seen.status, err)
		f.header = seen.header
		return nil, f
	}
	if msg.Type != "message" || len(msg.Content) == 0 && msg.StopReason == "" {
		return nil, &failure{status: seen.status, retryable: true, malformed: true,
			message: "server sent a body that is not a message"}
	}
	return anthropicResponse(msg, structured), nil
}

// anthropicMessage is the error message of an API error body.
func anthropicMessage(ctx context.Context, e *anthropic.Error) string {
	var body struct {
		Error struct {
			Type, Message string
		}
	}
	if json.Unmarshal([]byte(e.RawJSON()), &body) == nil && body.Error.Message != "" {
		return body.Error.Type + ": " + body.Error.Message
	}
	return snippet(ctx, e.RawJSON())
}

// anthropicResponse turns a message into a Response: its text, its tool
// calls, and for a structured request the forced call's input as the answer.
func anthropicResponse(msg *anthropic.Message, structured bool) *Response {
	out := openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant}
	var text []string
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			text = append(text, b.Text)
		case "tool_use":
			if structured && b.Name == answerTool {
				text = append(text, string(b.Input))
				continue
			}
			out.ToolCalls = append(out.ToolCalls, openai.ToolCall{ID: b.ID, Type: openai.ToolTypeFunction,
				Function: openai.FunctionCall{Name: b.Name, Arguments: string(b.Input)}})
		}
	}
	out.Content = strings.Join(text, "\n")
	finish := "stop"
	switch msg.StopReason {
	case anthropic.StopReasonToolUse:
		if len(out.ToolCalls) > 0 {
			finish = string(openai.FinishReasonToolCalls)
		}
	case anthropic.StopReasonMaxTokens:
		finish = string(openai.FinishReasonLength)
	case anthropic.StopReasonRefusal:
		finish = string(openai.FinishReasonContentFilter)
	}
	u := msg.Usage
	return &Response{
		Message:          out,
		Content:          visible(out.Content),
		Raw:              out.Content,
		FinishReason:     finish,
		Model:            string(msg.Model),
		TokensIn:         int(u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens),
		TokensOut:        int(u.OutputTokens),
		CacheReadTokens:  int(u.CacheReadInputTokens),
		CacheWriteTokens: int(u.CacheCreationInputTokens),
	}
}
