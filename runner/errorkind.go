package runner

import (
	"context"
	"errors"

	"assay/runner/agent"
	"assay/runner/agent/mcptool"
	"assay/runner/judge"
	"assay/runner/llm"
	"assay/store"
)

// errorKind sorts an agent's or a judge's error for the report, most
// particular first: a guard, a turn limit, a reply too large, a judge's
// unusable answer, an MCP server or a command that failed, then what the
// model API said, then a deadline.
func errorKind(err error) store.ErrorKind {
	var guard *agent.GuardError
	var turns *agent.TurnLimitError
	var api *llm.Error
	var reported *agent.ModelError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &guard):
		return store.ErrorGuard
	case errors.As(err, &turns):
		return store.ErrorTurnLimit
	case errors.Is(err, llm.ErrReplyTooLarge):
		return store.ErrorTooLarge
	case errors.Is(err, judge.ErrInvalidAnswer):
		return store.ErrorBadResponse
	case errors.Is(err, mcptool.ErrStart):
		return store.ErrorMCPServer
	case errors.Is(err, context.DeadlineExceeded):
		return store.ErrorTimeout
	case errors.Is(err, agent.ErrCommandFailed):
		return store.ErrorCommand
	case errors.As(err, &api):
		return apiErrorKind(api)
	case errors.As(err, &reported):
		return statusKind(reported.Status)
	}
	return store.ErrorOther
}

// apiErrorKind sorts the final failure of a model API call.
func apiErrorKind(e *llm.Error) store.ErrorKind {
	switch {
	case e.Timeout:
		return store.ErrorTimeout
	case e.Malformed:
		return store.ErrorBadResponse
	case e.StatusCode == 0:
		return store.ErrorConnection
	}
	return statusKind(e.StatusCode)
}

// statusKind sorts an HTTP error status.
func statusKind(status int) store.ErrorKind {
	switch {
	case status == 429:
		return store.ErrorRateLimited
	case status >= 500:
		return store.ErrorServer
	case status >= 400:
		return store.ErrorRefused
	}
	return store.ErrorOther
}
