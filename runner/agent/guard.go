package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"assay"
	"assay/store"
)

// The guards a condition may set, named as in the run configuration.
const (
	GuardToolUse     = "require_mcp_tool_use"
	GuardToolSuccess = "require_mcp_tool_success"
)

// GuardError says that every attempt at an answer broke a guard of the
// condition. It comes with the last attempt's answer, the tokens and model
// calls of all attempts summed, so the caller can record what was spent.
type GuardError struct {
	Guard    string
	Attempts int
}

// Error names the guard and how many answers broke it.
func (e *GuardError) Error() string {
	what := "the agent made no MCP tool call"
	if e.Guard == GuardToolSuccess {
		what = "no MCP tool call of the agent succeeded"
	}
	attempts := "1 attempt"
	if e.Attempts != 1 {
		attempts = fmt.Sprintf("%d attempts", e.Attempts)
	}
	return fmt.Sprintf("guard %s: %s in %s", e.Guard, what, attempts)
}

// Guarded wraps a so that, under a condition with require_mcp_tool_use or
// require_mcp_tool_success, an answer that breaks the guard is asked again,
// up to maxAttempts answers in all (as k-eval does), and then becomes a
// *GuardError. Other errors are returned at once. Tokens and model calls of
// discarded attempts are added to the answer returned, with an error too,
// since they were paid for; its tool calls are the last attempt's. Each
// attempt has its own deadline, perAttempt (0: none), and one that runs
// out is a timeout of that attempt, with the time it spent.
func Guarded(a Agent, maxAttempts int, perAttempt time.Duration) Agent {
	return &guarded{inner: a, maxAttempts: max(maxAttempts, 1), perAttempt: perAttempt}
}

type guarded struct {
	inner       Agent
	maxAttempts int
	perAttempt  time.Duration
}

// attemptSlack lets an agent's own deadline of the same length fire first,
// with its own words (a command's "timed out after 300s").
const attemptSlack = 2 * time.Second

// attempt asks the inner agent once, under the attempt's deadline.
func (g *guarded) attempt(ctx context.Context, t Task, n int) (*Answer, error) {
	if g.perAttempt <= 0 || t.Batched {
		return g.inner.Answer(ctx, t)
	}
	actx, cancel := context.WithTimeout(ctx, g.perAttempt+attemptSlack)
	defer cancel()
	start := time.Now()
	ans, err := g.inner.Answer(actx, t)
	if err == nil || ctx.Err() != nil || !errors.Is(actx.Err(), context.DeadlineExceeded) {
		return ans, err
	}
	if ans == nil {
		ans = &Answer{}
	}
	ans.Latency = time.Since(start)
	return ans, &lateError{msg: fmt.Sprintf("agent: no answer within the agent's timeout of %s (agent.timeout_seconds) on attempt %d",
		g.perAttempt, n), err: err}
}

// lateError is an attempt that ran out of time: errors.Is finds
// context.DeadlineExceeded in it, and what the agent was doing underneath.
type lateError struct {
	msg string
	err error
}

func (e *lateError) Error() string        { return e.msg + ": " + e.err.Error() }
func (e *lateError) Unwrap() error        { return e.err }
func (e *lateError) Is(target error) bool { return target == context.DeadlineExceeded }

// Answer asks the inner agent until an answer keeps the condition's guards.
func (g *guarded) Answer(ctx context.Context, t Task) (*Answer, error) {
	if !t.Condition.RequireMCPToolUse && !t.Condition.RequireMCPToolSuccess {
		return g.attempt(ctx, t, 1)
	}
	var spent Answer
	for n := 1; ; n++ {
		ans, err := g.attempt(ctx, t, n)
		if ans == nil && n == 1 {
			return nil, err
		}
		if ans == nil {
			ans = &Answer{}
		}
		addSpent(ans, spent)
		if err != nil {
			return ans, err // with the discarded attempts' cost
		}
		broken := brokenGuard(t.Condition, ans.ToolCalls)
		if broken == "" {
			return ans, nil
		}
		if n >= g.maxAttempts {
			return ans, &GuardError{Guard: broken, Attempts: n}
		}
		spent = *ans
		spent.Retries = append(spent.Retries, fmt.Sprintf("guard %s broken by answer %d; asking again", broken, n))
	}
}

// addSpent counts what earlier attempts spent into ans.
func addSpent(ans *Answer, spent Answer) {
	ans.TokensIn += spent.TokensIn
	ans.TokensOut += spent.TokensOut
	ans.Attempts += spent.Attempts
	ans.Latency += spent.Latency
	ans.BatchedCalls += spent.BatchedCalls
	ans.BatchedTokensIn += spent.BatchedTokensIn
	ans.BatchedTokensOut += spent.BatchedTokensOut
	ans.Retries = slices.Concat(spent.Retries, ans.Retries)
}

// Close closes the inner agent.
func (g *guarded) Close() error { return g.inner.Close() }

// brokenGuard names the first guard of c that calls break, or "".
// A call to a tool no server offers (Server empty) is no MCP tool call.
func brokenGuard(c assay.Condition, calls []store.ToolCall) string {
	used, succeeded := false, false
	for _, tc := range calls {
		if tc.Server == "" || tc.Denied {
			continue // Claude Code's own tools, or a call it refused to run
		}
		used = true
		succeeded = succeeded || !tc.IsError
	}
	switch {
	case c.RequireMCPToolUse && !used:
		return GuardToolUse
	case c.RequireMCPToolSuccess && !succeeded:
		return GuardToolSuccess
	}
	return ""
}
