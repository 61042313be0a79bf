// Package sandbox runs untrusted Python programs, such as model-written
// HumanEval completions, with no network, no view of the host's files or
// environment, resource limits, a wall-clock timeout, and every process of
// the run killed when it ends.
//
// Isolation comes from bubblewrap (bwrap): fresh user, pid, network, ipc and
// uts namespaces, a root made of read-only system directories and an empty
// private /tmp. Resource limits are set with prlimit(1) from util-linux
// inside the sandbox, just before the interpreter starts. When the caller
// is root, bwrap itself is started as uid 65534 (nobody) so the process
// limit applies and no host privilege is carried in.
package sandbox

import (
	"context"
	"errors"
	"strconv"
	"time"
)

// MaxOutputBytes caps how much of stdout and of stderr a Result keeps; the
// rest is counted and dropped so a program printing forever cannot exhaust
// the evaluator's memory.
const MaxOutputBytes = 64 << 10

// nobody is the uid and gid the program runs as, inside the sandbox and, when
// the caller is root, on the host.
const nobody = 65534

// ErrUnavailable reports that bubblewrap cannot be used on this machine and
// the Runner was not told to run without a sandbox.
var ErrUnavailable = errors.New("sandbox unavailable")

// Limits bounds one run. A zero field takes its value from DefaultLimits.
type Limits struct {
	Timeout      time.Duration // wall clock, from start to kill
	MemoryBytes  int64         // address space (RLIMIT_AS)
	MaxProcs     int           // processes and threads (RLIMIT_NPROC)
	MaxFileBytes int64         // size of any file written (RLIMIT_FSIZE)
	MaxOpenFiles int           // open file descriptors (RLIMIT_NOFILE)
}

// DefaultLimits returns the limits used for zero fields of Limits: enough
// for HumanEval-style programs, small enough to stop runaway ones quickly.
func DefaultLimits() Limits {
	return Limits{
		Timeout:      10 * time.Second,
		MemoryBytes:  512 << 20,
		MaxProcs:     64,
		MaxFileBytes: 16 << 20,
		MaxOpenFiles: 64,
	}
}

// withDefaults fills the zero fields of l from DefaultLimits.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.Timeout <= 0 {
		l.Timeout = d.Timeout
	}
	if l.MemoryBytes <= 0 {
		l.MemoryBytes = d.MemoryBytes
	}
	if l.MaxProcs <= 0 {
		l.MaxProcs = d.MaxProcs
	}
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = d.MaxFileBytes
	}
	if l.MaxOpenFiles <= 0 {
		l.MaxOpenFiles = d.MaxOpenFiles
	}
	return l
}

// prlimitArgs is the prlimit(1) command line that sets l on the command
// that follows it. Soft and hard limits are equal, so the program cannot
// raise them; CPU time is capped just above the wall-clock timeout and core
// dumps are off.
func prlimitArgs(prlimit string, l Limits) []string {
	cpuSeconds := int64(l.Timeout/time.Second) + 1
	return []string{prlimit,
		"--as=" + strconv.FormatInt(l.MemoryBytes, 10),
		"--nproc=" + strconv.Itoa(l.MaxProcs),
		"--fsize=" + strconv.FormatInt(l.MaxFileBytes, 10),
		"--nofile=" + strconv.Itoa(l.MaxOpenFiles),
		"--cpu=" + strconv.FormatInt(cpuSeconds, 10),
		"--core=0",
		"--",
	}
}

// Result is what one run of a program did.
type Result struct {
	ExitCode int    // the program's exit status; -1 when killed by a signal
	Stdout   string // at most MaxOutputBytes, then a note of what was dropped
	Stderr   string // at most MaxOutputBytes, then a note of what was dropped
	TimedOut bool   // the wall-clock timeout fired and the run was killed
	Killed   bool   // the program ended by a signal (timeout, limit, or its own)
	Signal   string // the signal's name, such as "SIGKILL", when Killed
	Duration time.Duration
}

// Runner runs Python programs under Limits. The zero value is ready to use
// and refuses to run anything when bubblewrap is unavailable.
type Runner struct {
	Limits Limits
	// Unsandboxed, an explicit opt-in, runs the interpreter directly when
	// bubblewrap is unavailable: limits, a cleared environment, a private
	// temporary directory, the timeout and the process-group kill still
	// apply, but the program can see the host's files and network, and a
	// child that leaves the process group can outlive the run.
	Unsandboxed bool
	// Python is the interpreter; empty means /usr/bin/python3 when present,
	// else python3 from PATH. Inside the sandbox only system directories
	// are visible, so an interpreter outside /usr has its installation
	// prefix bound read-only; when the caller is root it must be readable
	// by uid 65534.
	Python string
}

// RunPython runs program with the interpreter and returns what it did. A
// program that fails, crashes or times out is a Result, not an error; the
// error reports that the program could not be run at all, or that ctx was
// cancelled.
func (r *Runner) RunPython(ctx context.Context, program string) (*Result, error) {
	limits := r.Limits.withDefaults()
	bwrap, err := lookBwrap()
	if err == nil && r.Unsandboxed {
		err = Available() // fall back on a bwrap that cannot work here too
	}
	if err != nil {
		if !r.Unsandboxed {
			return nil, err
		}
		return r.runDirect(ctx, limits, program)
	}
	return r.runSandboxed(ctx, bwrap, limits, program)
}
