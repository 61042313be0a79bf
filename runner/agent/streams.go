package agent

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"assay/runner/agent/internal/proc"
)

// streams connects a command to its stdin, stdout and stderr through pipes
// the agent owns rather than exec's copying goroutines, so that Wait
// returns as soon as the command exits even when a process it left behind
// still holds a pipe; that process dies with the group, and the output is
// read to its end.
type streams struct {
	stdout *headBuffer
	stderr *proc.Tail
	child  []*os.File // the command's ends, closed here once it started
	ours   []*os.File // our read ends
	wg     sync.WaitGroup
}

// attach gives cmd pipes for its input (written by a goroutine of its own)
// and outputs.
func attach(cmd *exec.Cmd, input string) (*streams, error) {
	s := &streams{stdout: &headBuffer{max: maxCommandOutput}, stderr: &proc.Tail{Max: stderrExcerpt}}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("stdin pipe: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW)
		return nil, fmt.Errorf("stdout pipe: %w", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW, outR, outW)
		return nil, fmt.Errorf("stderr pipe: %w", err)
	}
	cmd.Stdin = inR
	cmd.Stdout = outW
	cmd.Stderr = errW
	s.child = []*os.File{inR, outW, errW}
	s.ours = []*os.File{outR, errR}
	go func() {
		// Ends with an error when the command never reads: nothing to do.
		_, _ = io.Copy(inW, strings.NewReader(input))
		inW.Close()
	}()
	s.read(outR, s.stdout)
	s.read(errR, s.stderr)
	return s, nil
}

// read copies r to w until EOF.
func (s *streams) read(r io.Reader, w io.Writer) {
	s.wg.Go(func() { _, _ = io.Copy(w, r) })
}

// started closes the command's ends in this process: once the command and
// its children are gone, reads reach EOF.
func (s *streams) started() { closeAll(s.child...) }

// drain waits for the outputs to reach EOF, or at most d for a process
// that escaped the group and still holds them, then closes our ends.
func (s *streams) drain(d time.Duration) {
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(d):
	}
	closeAll(s.ours...)
	<-done
}

func closeAll(files ...*os.File) {
	for _, f := range files {
		_ = f.Close()
	}
}
