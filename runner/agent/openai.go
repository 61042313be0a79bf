package agent

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"assay/runner/agent/mcptool"
	"assay/runner/llm"
)

// DefaultMaxTurns is how many model calls one answer may take when
// OpenAIOptions.MaxTurns is zero.
const DefaultMaxTurns = 20

// OpenAIOptions configure an OpenAI agent. Zero fields take defaults.
type OpenAIOptions struct {
	// MaxTurns bounds the model calls of one answer (default 20).
	MaxTurns int
	// Getenv resolves ${ENV} in MCP server values; nil uses os.Getenv.
	Getenv func(string) string
	// ToolTimeout is the deadline of one tool call (default 60s).
	ToolTimeout time.Duration
	// StartTimeout bounds starting one MCP server (default 60s).
	StartTimeout time.Duration
	Logger       *slog.Logger
}

// OpenAI is an OpenAI-compatible model in a tool loop over the MCP servers
// of the task's condition. Servers start on first use and are shared by
// the tasks of a condition until Close.
type OpenAI struct {
	client *llm.Client
	opts   OpenAIOptions
	pool   *mcptool.Pool
}

var _ Agent = (*OpenAI)(nil)

// NewOpenAI returns an agent asking client. Close it to stop its servers.
func NewOpenAI(client *llm.Client, opts OpenAIOptions) *OpenAI {
	if opts.MaxTurns <= 0 {
		opts.MaxTurns = DefaultMaxTurns
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	pool := mcptool.NewPool(mcptool.Options{Getenv: opts.Getenv, StartTimeout: opts.StartTimeout,
		CallTimeout: opts.ToolTimeout, Logger: opts.Logger})
	return &OpenAI{client: client, opts: opts, pool: pool}
}

// Answer offers the model the tools of the condition's servers and runs
// the calls it makes, turn after turn, until it answers without calling a
// tool. Tool failures go back to the model; a server that cannot start is
// an error, and so is reaching MaxTurns (a *TurnLimitError). With an error
// after the first call, the answer holds what was spent.
func (a *OpenAI) Answer(ctx context.Context, t Task) (*Answer, error) {
	start := time.Now()
	tools, err := a.pool.Toolset(ctx, t.Condition)
	if err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	msgs := firstMessages(t)
	ans := &Answer{Model: a.client.Model()}
	for turn := 1; turn <= a.opts.MaxTurns; turn++ {
		resp, err := a.client.Chat(ctx, llm.Request{Messages: msgs, Tools: tools.Tools()})
		if err != nil {
			ans.Latency = time.Since(start)
			return ans, fmt.Errorf("agent: turn %d: %w", turn, err)
		}
		ans.add(resp)
		if len(resp.Message.ToolCalls) == 0 {
			ans.Content = resp.Content
			ans.Latency = time.Since(start)
			return ans, nil
		}
		msgs = append(msgs, resp.Message)
		thought := strings.TrimSpace(resp.Content) // what the model said with its calls: the first one keeps it
		for i, tc := range resp.Message.ToolCalls {
			if i > 0 {
				thought = ""
			}
			msg, err := a.call(ctx, tools, ans, turn, tc, thought, t.Condition.Name)
			if err != nil {
				ans.Latency = time.Since(start)
				return ans, fmt.Errorf("agent: turn %d: %w", turn, err)
			}
			msgs = append(msgs, msg)
		}
	}
	ans.Latency = time.Since(start)
	return ans, &TurnLimitError{Turns: a.opts.MaxTurns}
}

// call runs one tool call, records it in ans and returns the tool message
// for the model.
func (a *OpenAI) call(ctx context.Context, tools *mcptool.Toolset, ans *Answer, turn int, tc openai.ToolCall, thought, condition string) (openai.ChatCompletionMessage, error) {
	c, err := tools.Call(ctx, tc.Function.Name, tc.Function.Arguments)
	if err != nil {
		return openai.ChatCompletionMessage{}, err
	}
	c.Trace.Turn, c.Trace.Thought = turn, thought
	ans.ToolCalls = append(ans.ToolCalls, c.Trace)
	a.opts.Logger.Debug("tool call", "condition", condition, "turn", turn, "server", c.Trace.Server,
		"tool", c.Trace.Tool, "is_error", c.Trace.IsError, "duration_ms", c.Trace.DurationMS)
	return openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, Content: c.Content, ToolCallID: tc.ID}, nil
}

// firstMessages are the condition's system prompt and the task's prompt.
func firstMessages(t Task) []openai.ChatCompletionMessage {
	var msgs []openai.ChatCompletionMessage
	if t.Condition.SystemPrompt != "" {
		msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: t.Condition.SystemPrompt})
	}
	return append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: t.Prompt})
}

// add counts one model call's usage into a.
func (a *Answer) add(resp *llm.Response) {
	a.TokensIn += resp.TokensIn
	a.TokensOut += resp.TokensOut
	a.CacheReadTokens += resp.CacheReadTokens
	a.CacheWriteTokens += resp.CacheWriteTokens
	if resp.Model != "" {
		a.Model = resp.Model // the model that answered, as the server names it (often dated)
	}
	a.Attempts += resp.Attempts
	a.Retries = append(a.Retries, resp.Retries...)
	if resp.Batched {
		a.BatchedCalls++
		a.BatchedTokensIn += resp.TokensIn
		a.BatchedTokensOut += resp.TokensOut
	}
}

// Close stops every MCP server the agent started and waits for them.
func (a *OpenAI) Close() error {
	if err := a.pool.Close(); err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	return nil
}

// TurnLimitError is returned, with the answer so far, when the model still
// calls tools after MaxTurns turns.
type TurnLimitError struct {
	Turns int
}

// Error says how many turns passed without a final answer.
func (e *TurnLimitError) Error() string {
	return fmt.Sprintf("agent: no final answer after %d turns", e.Turns)
}
