package scoring

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"assay/runner/sandbox"
)

// requireSandbox fails the test, never skips it, when bubblewrap cannot be
// used: code is only ever run in the sandbox.
func requireSandbox(t *testing.T) {
	t.Helper()
	if err := sandbox.Available(); err != nil {
		t.Fatalf("code_execution needs the bubblewrap sandbox: %v", err)
	}
}

// functionOnly returns the prompt from its def of entryPoint onwards: the
// function as a model restating it would write it, without the imports and
// helpers before it.
func functionOnly(prompt, entryPoint string) string {
	if loc := defines(entryPoint).FindStringIndex(prompt); loc != nil {
		return prompt[loc[0]:]
	}
	return prompt
}

// fenced wraps code in a Python block between two lines of prose.
func fenced(code string) string {
	return "Here is the implementation:\n\n```python\n" + code + "```\n\nIt handles the edge cases."
}

func TestCodeExecutionHumanEval(t *testing.T) {
	requireSandbox(t)
	eval := &CodeEvaluator{Timeout: 5 * time.Second}
	eachDataset(t, "humaneval.jsonl", "humaneval_sample.jsonl", func(t *testing.T, rows []humanEvalSample) {
		checkHumanEval(t, eval, rows)
	})
}

// checkHumanEval scores each task's canonical solution, which must pass, and
// a body of pass, which must fail, in every shape a model might answer.
func checkHumanEval(t *testing.T, eval *CodeEvaluator, rows []humanEvalSample) {
	const passBody = "    pass\n"
	for _, s := range rows {
		full := functionOnly(s.Prompt, s.EntryPoint)
		variants := []struct {
			name, response string
			want           float64
		}{
			{"canonical body", s.CanonicalSolution, 1},
			{"canonical full prompt", s.Prompt + s.CanonicalSolution, 1},
			{"canonical function", full + s.CanonicalSolution, 1},
			{"canonical fenced body", fenced(s.CanonicalSolution), 1},
			{"canonical fenced function", fenced(full + s.CanonicalSolution), 1},
			{"pass body", passBody, 0},
			{"pass function", full + passBody, 0},
			{"pass fenced body", fenced(passBody), 0},
			{"pass fenced function", fenced(full + passBody), 0},
		}
		for _, v := range variants {
			t.Run(s.TaskID+"/"+v.name, func(t *testing.T) {
				t.Parallel()
				out, err := eval.Evaluate(context.Background(), s.Prompt, v.response, s.Test, s.EntryPoint)
				if err != nil {
					t.Fatalf("Evaluate: %v", err)
				}
				if out.Value != v.want || out.Metric != MetricCodeExecution {
					t.Fatalf("value %v, want %v; detail:\n%s\nprogram:\n%s", out.Value, v.want, out.Detail, out.Extracted)
				}
				if (out.Detail == "") != (v.want == 1) || strings.HasPrefix(out.Detail, "timeout") {
					t.Errorf("detail %q does not fit a value of %v", out.Detail, out.Value)
				}
			})
		}
	}
}

func TestCodeExecutionFailureReasons(t *testing.T) {
	requireSandbox(t)
	const prompt = "def add(a, b):\n    \"\"\"Return a + b.\"\"\"\n"
	const test = "def check(candidate):\n    assert candidate(1, 2) == 3\n"
	tests := []struct {
		name, response, wantDetail string
		want                       float64
	}{
		{"body", "    return a + b\n", "", 1},
		{"body with trimmed first line", "return a + b", "", 1},
		{"body at the margin", "total = a + b\nreturn total", "", 1},
		{"trimmed block opener", "if a == 0:\n        return b\n    return a + b", "", 1},
		{"function in fence after test block", "```python\nprint(add(1, 2))\n```\n```python\ndef add(a, b):\n    return a + b\n```", "", 1},
		{"indented function in fence", "```py\n    def add(a, b):\n        return a + b\n```", "", 1},
		{"unclosed fence", "```python\ndef add(a, b):\n    return a + b\n", "", 1},
		{"wrong result", "    return a - b\n", "assertion failed: assert candidate(1, 2) == 3", 0},
		{"exception", "    raise ValueError('nope')\n", "exception: ValueError: nope", 0},
		{"syntax error", "    return a +\n", "syntax error: SyntaxError", 0},
		{"timeout", "    while True:\n        pass\n", "timeout: still running after 2s", 0},
		{"memory", "    x = bytearray(1 << 40)\n    return a + b\n", "memory limit exceeded", 0},
		{"killed", "    import os\n    os.kill(os.getpid(), 9)\n", "killed by SIGKILL", 0},
		{"output excerpt", "    print('x' * 100000)\n    return 0\n", "--- stdout ---\nxxx", 0},
	}
	eval := &CodeEvaluator{Runner: &sandbox.Runner{}, Timeout: 2 * time.Second}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, err := eval.Evaluate(context.Background(), prompt, tt.response, test, "add")
			if err != nil {
				t.Fatalf("Evaluate: %v", err)
			}
			if out.Value != tt.want || !strings.Contains(out.Detail, tt.wantDetail) {
				t.Errorf("got %v %q, want %v with detail containing %q\nprogram:\n%s", out.Value, out.Detail, tt.want, tt.wantDetail, out.Extracted)
			}
			if len(out.Detail) > 2*excerptBytes+400 {
				t.Errorf("detail is %d bytes, want excerpts of at most %d each", len(out.Detail), excerptBytes)
			}
		})
	}
}

func TestCodeExecutionRejectsBadEntryPoint(t *testing.T) {
	eval := &CodeEvaluator{}
	for _, entry := range []string{"", "add)\nimport os\n(", "1add"} {
		if _, err := eval.Evaluate(context.Background(), "", "pass", "", entry); !errors.Is(err, errSample) {
			t.Errorf("entry point %q: err = %v, want errSample", entry, err)
		}
	}
}
