// Package agent runs the system under test: an OpenAI-compatible model (with a
// tool loop over the condition's MCP servers) or an external command.
package agent

import (
	"context"
	"time"

	"assay"
	"assay/store"
)

// Task is one question put to the agent under one condition.
type Task struct {
	// Condition is the run's snapshot; its MCP server values may hold ${ENV}
	// references, resolved when the servers start.
	Condition assay.Condition
	// Prompt is the user message: the sample's input, formatted for its kind.
	Prompt string
	// Batched: its calls go in a batch (llm.InBatch), answered within
	// hours, so the agent's own deadline does not apply.
	Batched bool
}

// Answer is the agent's final response and what it took to get it.
type Answer struct {
	Content   string
	TokensIn  int
	TokensOut int
	Latency   time.Duration
	// Attempts counts model calls or command starts, retries included.
	Attempts  int
	Retries   []string
	ToolCalls []store.ToolCall
	// Model is the model that answered, for pricing; empty when a command
	// agent does not say.
	Model string
	// CacheReadTokens and CacheWriteTokens are the part of TokensIn read
	// from, or written to, the provider's prompt cache, priced apart.
	CacheReadTokens  int
	CacheWriteTokens int
	// ReportedCostUSD is what the agent itself said the answer cost (Claude
	// Code's total_cost_usd); nil when it did not say.
	ReportedCostUSD *float64
	// Turns is the agent's own count of its turns (Claude Code's
	// num_turns); 0 when it did not say.
	Turns int
	// BatchedCalls are the model calls answered in a batch, and
	// BatchedTokensIn and BatchedTokensOut their part of the tokens.
	BatchedCalls                      int
	BatchedTokensIn, BatchedTokensOut int
}

// Agent answers tasks. Implementations are safe for concurrent use.
type Agent interface {
	// Answer returns the agent's answer, or an error. With an error the
	// answer, when not nil, holds what the failed try spent — tokens,
	// model calls, tool calls, time — for the caller to record.
	Answer(ctx context.Context, t Task) (*Answer, error)
	// Close releases what the agent holds (MCP servers, processes).
	Close() error
}
