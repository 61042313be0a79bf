package sandbox

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// These tests run without bubblewrap, so they hold on any machine: the
// Unsandboxed mode must still clear the environment and apply the limits,
// the timeout and the process-group kill.

func TestUnsandboxedKeepsLimits(t *testing.T) {
	const secret = "sk-assay-test-secret-direct"
	t.Setenv("OPENAI_API_KEY", secret)
	marker := newMarker(t)
	tests := []struct {
		name    string
		limits  Limits
		program string
		check   func(*Result) string
	}{
		{"environment cleared", Limits{}, "import os\nprint(sorted(os.environ))", func(r *Result) string {
			if r.ExitCode != 0 || strings.Contains(r.Stdout, "OPENAI_API_KEY") {
				return "the caller's environment reached the program"
			}
			return ""
		}},
		{"timeout", Limits{Timeout: time.Second}, "while True:\n    pass", func(r *Result) string {
			if !r.TimedOut || r.Signal != "SIGKILL" || r.Duration > 2500*time.Millisecond {
				return "an infinite loop was not stopped by the timeout"
			}
			return ""
		}},
		{"memory", Limits{MemoryBytes: 256 << 20}, "x = bytearray(4 << 30)", func(r *Result) string {
			if r.ExitCode == 0 || !strings.Contains(r.Stderr, "MemoryError") {
				return "a 4 GiB allocation was not stopped by a 256 MiB limit"
			}
			return ""
		}},
		{"file size", Limits{MaxFileBytes: 1 << 20}, "open('big', 'wb').write(b'x' * (8 << 20))", func(r *Result) string {
			if r.ExitCode == 0 || !strings.Contains(r.Stderr, "File too large") {
				return "an 8 MiB file was not stopped by a 1 MiB limit"
			}
			return ""
		}},
		// Outside a user namespace RLIMIT_NPROC counts all the caller's
		// processes, so this row lifts it to be sure the child can start.
		{"child in the group", Limits{MaxProcs: 1 << 16}, fmt.Sprintf("import subprocess, sys\nsubprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)', %q])", marker), func(r *Result) string {
			if r.ExitCode != 0 {
				return "the program failed"
			}
			return ""
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Runner{Unsandboxed: true}
			res, err := r.runDirect(context.Background(), tt.limits.withDefaults(), tt.program)
			if err != nil {
				t.Fatalf("runDirect: %v", err)
			}
			if msg := tt.check(res); msg != "" {
				t.Errorf("%s: %+v", msg, res)
			}
		})
	}
	if pids := survivorsAfter(t, marker); len(pids) > 0 {
		t.Errorf("a child in the program's process group outlives the run: %v", pids)
	}
}
