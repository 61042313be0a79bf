package scoring

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"assay/runner/sandbox"
)

// failureDetail explains a failed run: the reason, then excerpts of what
// the program wrote.
func failureDetail(res *sandbox.Result, timeout time.Duration) string {
	var b strings.Builder
	b.WriteString(failureReason(res, timeout))
	if res.Stdout != "" {
		b.WriteString("\n--- stdout ---\n")
		b.WriteString(excerpt(res.Stdout, excerptBytes))
	}
	if res.Stderr != "" {
		b.WriteString("\n--- stderr ---\n")
		b.WriteString(excerpt(res.Stderr, excerptBytes))
	}
	return b.String()
}

// failureReason names why a run failed, in one line.
func failureReason(res *sandbox.Result, timeout time.Duration) string {
	switch {
	case res.TimedOut:
		return fmt.Sprintf("timeout: still running after %s", timeout)
	case res.Signal == "SIGXCPU":
		return "killed by SIGXCPU: CPU time limit exceeded"
	case res.Signal == "SIGKILL":
		return "killed by SIGKILL: a resource limit was exceeded"
	case res.Killed:
		return "killed by " + res.Signal
	}
	name, msg, ok := lastException(res.Stderr)
	switch {
	case !ok:
		return fmt.Sprintf("exit status %d", res.ExitCode)
	case name == "AssertionError":
		return withMessage("assertion failed", msg, failingAssert(res.Stderr))
	case name == "SyntaxError" || name == "IndentationError" || name == "TabError":
		return withMessage("syntax error", name, msg)
	case name == "MemoryError":
		return "memory limit exceeded: MemoryError"
	default:
		return withMessage("exception", name, msg)
	}
}

// withMessage joins a reason with the non-empty details that follow it.
func withMessage(reason string, details ...string) string {
	for _, d := range details {
		if d != "" {
			reason += ": " + d
		}
	}
	return reason
}

// exceptionLine matches the last line of a Python traceback: the exception's
// (possibly dotted) name and its message.
var exceptionLine = regexp.MustCompile(`^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Iteration))(?::\s?(.*))?$`)

// lastException returns the name and message of the exception that ended
// the program, from its stderr.
func lastException(stderr string) (name, msg string, ok bool) {
	lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if m := exceptionLine.FindStringSubmatch(lines[i]); m != nil {
			return m[1], m[2], true
		}
	}
	return "", "", false
}

// failingAssert returns the source of the last assert statement the
// traceback shows, such as "assert candidate([1, 2]) == 3".
func failingAssert(stderr string) string {
	lines := strings.Split(stderr, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); strings.HasPrefix(l, "assert ") {
			return excerpt(l, 300)
		}
	}
	return ""
}

// excerpt shortens s to about limit bytes, keeping its start and, larger, its
// end, where a traceback's cause is.
func excerpt(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	head, tail := limit/4, limit-limit/4
	return strings.ToValidUTF8(s[:head], "") +
		fmt.Sprintf("\n[... %d bytes ...]\n", len(s)-head-tail) +
		strings.ToValidUTF8(s[len(s)-tail:], "")
}
