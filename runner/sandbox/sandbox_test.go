package sandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// requireSandbox fails the test, never skips it, when bubblewrap cannot be
// used: the sandbox is a safety requirement, not an optional extra.
func requireSandbox(t *testing.T) {
	t.Helper()
	if err := Available(); err != nil {
		t.Fatalf("the code sandbox needs bubblewrap: %v", err)
	}
}

// run runs program with limits in the sandbox and fails the test on an
// infrastructure error.
func run(t *testing.T, limits Limits, program string) *Result {
	t.Helper()
	r := &Runner{Limits: limits}
	res, err := r.RunPython(context.Background(), program)
	if err != nil {
		t.Fatalf("RunPython: %v", err)
	}
	return res
}

func TestRunPythonReportsWhatTheProgramDid(t *testing.T) {
	requireSandbox(t)
	tests := []struct {
		name       string
		program    string
		wantExit   int
		wantSignal string
		wantStdout string
		wantStderr string
	}{
		{"prints", "print('hello', 6 * 7)", 0, "", "hello 42\n", ""},
		{"exit code", "import sys\nsys.exit(3)", 3, "", "", ""},
		{"exception", "raise ValueError('boom')", 1, "", "", "ValueError: boom"},
		{"traceback shows source", "def f():\n    assert 1 == 2\nf()", 1, "", "", "assert 1 == 2"},
		{"syntax error", "def f(:\n  pass", 1, "", "", "SyntaxError"},
		{"killed by signal", "import os\nos.kill(os.getpid(), 9)", -1, "SIGKILL", "", ""},
		{"reads no stdin", "import sys\nprint(repr(sys.stdin.read()))", 0, "", "''\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := run(t, Limits{Timeout: 5 * time.Second}, tt.program)
			if res.ExitCode != tt.wantExit || res.Signal != tt.wantSignal {
				t.Errorf("exit %d signal %q, want %d %q; stderr:\n%s", res.ExitCode, res.Signal, tt.wantExit, tt.wantSignal, res.Stderr)
			}
			if tt.wantStdout != "" && res.Stdout != tt.wantStdout {
				t.Errorf("stdout %q, want %q", res.Stdout, tt.wantStdout)
			}
			if !strings.Contains(res.Stderr, tt.wantStderr) {
				t.Errorf("stderr %q does not contain %q", res.Stderr, tt.wantStderr)
			}
			if res.TimedOut {
				t.Errorf("TimedOut for a program that ends")
			}
		})
	}
}

func TestRunPythonCapsOutput(t *testing.T) {
	requireSandbox(t)
	res := run(t, Limits{Timeout: 5 * time.Second}, "import sys\nsys.stdout.write('x' * 1000000)\nsys.stderr.write('y' * 1000000)")
	for name, out := range map[string]string{"stdout": res.Stdout, "stderr": res.Stderr} {
		if len(out) > MaxOutputBytes+100 || !strings.Contains(out, "more bytes dropped") {
			t.Errorf("%s kept %d bytes, want at most %d and a note of the rest", name, len(out), MaxOutputBytes)
		}
	}
}

func TestRunPythonStopsWhenCancelled(t *testing.T) {
	requireSandbox(t)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	r := &Runner{Limits: Limits{Timeout: 10 * time.Second}}
	_, err := r.RunPython(ctx, "while True:\n    pass")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want the caller's context error", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("returned after %v, want soon after cancellation", d)
	}
}

func TestRunPythonRefusesWithoutBubblewrap(t *testing.T) {
	bin := t.TempDir() // a PATH with prlimit but no bwrap, usable by uid 65534
	for _, dir := range []string{bin, filepath.Dir(bin)} {
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("/usr/bin/prlimit", filepath.Join(bin, "prlimit")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	if err := Available(); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "apt-get install bubblewrap") {
		t.Errorf("Available() = %v, want ErrUnavailable saying how to install bubblewrap", err)
	}
	_, err := (&Runner{}).RunPython(context.Background(), "print('ran')")
	if !errors.Is(err, ErrUnavailable) {
		t.Errorf("sandboxed RunPython err = %v, want ErrUnavailable", err)
	}
	res, err := (&Runner{Unsandboxed: true}).RunPython(context.Background(), "print('ran')")
	if err != nil || res.Stdout != "ran\n" {
		t.Errorf("unsandboxed RunPython = %+v, %v; want it to run", res, err)
	}
}
