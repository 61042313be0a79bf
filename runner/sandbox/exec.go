package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// drainDelay bounds how long a run waits for its output after the program
// has ended and its process group is killed, in case a process that left the
// group (possible only without bubblewrap) still holds the pipes open.
const drainDelay = 2 * time.Second

// execute runs cmd in its own process group under the wall-clock timeout,
// kills the whole group when the program ends, is cancelled or times out,
// and reports what the program did. feed runs once the process has started
// (to write the program into a pipe).
func execute(ctx context.Context, cmd *exec.Cmd, timeout time.Duration, feed func() error) (*Result, error) {
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	stdout, stderr, err := newOutputs()
	if err != nil {
		return nil, err
	}
	defer stdout.close()
	defer stderr.close()
	cmd.Stdout, cmd.Stderr = stdout.w, stderr.w
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL

	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	stdout.collect()
	stderr.collect()
	pgid := cmd.Process.Pid
	stop := context.AfterFunc(runCtx, func() { killGroup(pgid) })
	feedErr := feed()
	waitErr := cmd.Wait()
	res := &Result{Duration: time.Since(start)}
	stop()
	killGroup(pgid) // whatever is left of the group once its leader is gone
	res.TimedOut = ctx.Err() == nil && errors.Is(runCtx.Err(), context.DeadlineExceeded)
	res.Stdout, res.Stderr = drain(stdout, stderr)
	if err := exitStatus(res, cmd, waitErr); err != nil {
		return res, err
	}
	if ctx.Err() != nil {
		return res, fmt.Errorf("run cancelled: %w", ctx.Err())
	}
	if feedErr != nil && !res.TimedOut && !res.Killed {
		return res, fmt.Errorf("write program: %w", feedErr)
	}
	return res, nil
}

// killGroup sends SIGKILL to every process of the group; a group already
// gone is not an error.
func killGroup(pgid int) {
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

// exitStatus fills the exit code and signal of res from the finished cmd.
func exitStatus(res *Result, cmd *exec.Cmd, waitErr error) error {
	var exitErr *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exitErr) {
		return fmt.Errorf("wait %s: %w", cmd.Path, waitErr)
	}
	if cmd.ProcessState == nil {
		return fmt.Errorf("wait %s: no process state", cmd.Path)
	}
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ok {
		res.ExitCode = cmd.ProcessState.ExitCode()
		return nil
	}
	if ws.Signaled() {
		res.ExitCode = -1
		res.Killed = true
		res.Signal = signalName(ws.Signal())
		return nil
	}
	res.ExitCode = ws.ExitStatus()
	return nil
}

// signalNames spells the signals a sandboxed program is likely to die of.
var signalNames = map[syscall.Signal]string{
	syscall.SIGABRT: "SIGABRT",
	syscall.SIGBUS:  "SIGBUS",
	syscall.SIGFPE:  "SIGFPE",
	syscall.SIGHUP:  "SIGHUP",
	syscall.SIGILL:  "SIGILL",
	syscall.SIGINT:  "SIGINT",
	syscall.SIGKILL: "SIGKILL",
	syscall.SIGPIPE: "SIGPIPE",
	syscall.SIGSEGV: "SIGSEGV",
	syscall.SIGTERM: "SIGTERM",
	syscall.SIGXCPU: "SIGXCPU",
	syscall.SIGXFSZ: "SIGXFSZ",
	syscall.SIGALRM: "SIGALRM",
	syscall.SIGUSR1: "SIGUSR1",
	syscall.SIGUSR2: "SIGUSR2",
}

// signalName returns the conventional name of sig, such as "SIGKILL".
func signalName(sig syscall.Signal) string {
	if name, ok := signalNames[sig]; ok {
		return name
	}
	return fmt.Sprintf("signal %d", int(sig))
}

// toolFailure recognises a run that failed before the program started:
// bwrap and prlimit report their own errors as "<tool>: ..." on stderr and
// exit non-zero. Such a run is an infrastructure error, not a failing program.
func toolFailure(res *Result) error {
	if res.ExitCode == 0 || res.TimedOut || res.Killed {
		return nil
	}
	for _, tool := range []string{"bwrap", "prlimit"} {
		if strings.HasPrefix(res.Stderr, tool+": ") {
			msg, _, _ := strings.Cut(res.Stderr, "\n")
			return fmt.Errorf("%w: %s", ErrUnavailable, msg)
		}
	}
	return nil
}

// programPipe hands the program to the child through an inherited pipe, so
// it never touches the host's filesystem.
type programPipe struct {
	r, w *os.File
}

// newProgramPipe opens the pipe; its read end goes in cmd.ExtraFiles.
func newProgramPipe() (*programPipe, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("program pipe: %w", err)
	}
	return &programPipe{r: r, w: w}, nil
}

// feed writes program once the child has started and holds its own copy of
// the read end; closing the write end marks the end of the program.
func (p *programPipe) feed(program string) error {
	p.r.Close()
	_, err := p.w.WriteString(program)
	if cerr := p.w.Close(); err == nil {
		err = cerr
	}
	return err
}

// close releases both ends; ends already closed are ignored.
func (p *programPipe) close() {
	p.r.Close()
	p.w.Close()
}
