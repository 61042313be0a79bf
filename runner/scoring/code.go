package scoring

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"

	"assay/runner/sandbox"
)

// DefaultCodeTimeout is how long a HumanEval program may run when a
// CodeEvaluator has no Timeout.
const DefaultCodeTimeout = 10 * time.Second

// excerptBytes caps each of the stdout and stderr excerpts kept in a failed
// Outcome's Detail.
const excerptBytes = 2048

// CodeEvaluator scores code responses (HumanEval) by running them, with the
// sample's tests, in the sandbox.
type CodeEvaluator struct {
	Runner  *sandbox.Runner // nil means a sandbox.Runner with default limits
	Timeout time.Duration   // wall clock per program; 0 means DefaultCodeTimeout
}

// errSample reports a code sample that cannot be scored whatever the response.
var errSample = errors.New("invalid code sample")

// identifier matches a Python name, so entryPoint can be spliced into the
// program safely.
var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Evaluate runs the program made of prompt and response (see
// ExtractCompletion), then test, then check(entryPoint), and scores 1 when
// it exits cleanly within the timeout. A failing, crashing or hanging
// program is a 0 with the reason in Detail. The error is kept for what is
// not the response's fault: the sandbox unavailable, the run cancelled, or a
// sample without a valid entry point.
func (e *CodeEvaluator) Evaluate(ctx context.Context, prompt, response, test, entryPoint string) (Outcome, error) {
	out := Outcome{Metric: MetricCodeExecution}
	if !identifier.MatchString(entryPoint) {
		return out, fmt.Errorf("code execution: %w: entry point %q", errSample, entryPoint)
	}
	out.Extracted = ExtractCompletion(prompt, response, entryPoint)
	program := out.Extracted + "\n" + test + "\n" + "check(" + entryPoint + ")\n"

	runner := sandbox.Runner{}
	if e.Runner != nil {
		runner = *e.Runner
	}
	runner.Limits.Timeout = e.Timeout
	if runner.Limits.Timeout <= 0 {
		runner.Limits.Timeout = DefaultCodeTimeout
	}
	res, err := runner.RunPython(ctx, program)
	if err != nil {
		return out, fmt.Errorf("code execution: %w", err)
	}
	if res.ExitCode == 0 && !res.TimedOut && !res.Killed {
		out.Value = 1
		return out, nil
	}
	out.Detail = failureDetail(res, runner.Limits.Timeout)
	return out, nil
}
