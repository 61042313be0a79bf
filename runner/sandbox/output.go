package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
)

// output collects one stream of the program's output through a pipe the run
// owns, rather than through exec.Cmd's copying, so that the run need not
// wait on a descendant that keeps the pipe open after the program has ended.
type output struct {
	r, w *os.File
	buf  capWriter
	done chan struct{}
}

// newOutputs opens the pipes for stdout and stderr.
func newOutputs() (stdout, stderr *output, err error) {
	stdout, err = newOutput()
	if err != nil {
		return nil, nil, err
	}
	stderr, err = newOutput()
	if err != nil {
		stdout.close()
		return nil, nil, err
	}
	return stdout, stderr, nil
}

// newOutput opens one pipe; its write end goes to the child.
func newOutput() (*output, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("output pipe: %w", err)
	}
	return &output{r: r, w: w, buf: capWriter{limit: MaxOutputBytes}, done: make(chan struct{})}, nil
}

// collect starts reading, once the child holds its own copy of the write end.
func (o *output) collect() {
	o.w.Close()
	go func() {
		defer close(o.done)
		_, _ = io.Copy(&o.buf, o.r) // ends at EOF, or when drain closes r
	}()
}

// close releases both ends; ends already closed are ignored.
func (o *output) close() {
	o.r.Close()
	o.w.Close()
}

// drain waits, up to drainDelay, for both streams to reach their end, cuts
// off whatever is still open after that, and returns what was collected.
func drain(stdout, stderr *output) (string, string) {
	ctx, cancel := context.WithTimeout(context.Background(), drainDelay)
	defer cancel()
	for _, o := range []*output{stdout, stderr} {
		select {
		case <-o.done:
		case <-ctx.Done():
			o.r.Close()
			<-o.done
		}
	}
	return stdout.buf.String(), stderr.buf.String()
}

// capWriter keeps the first limit bytes written to it and counts the rest.
type capWriter struct {
	limit   int
	buf     bytes.Buffer
	dropped int64
}

// Write keeps what fits under the limit; it never fails, so the program's
// pipe is always drained.
func (w *capWriter) Write(p []byte) (int, error) {
	room := w.limit - w.buf.Len()
	if room >= len(p) {
		w.buf.Write(p)
		return len(p), nil
	}
	if room > 0 {
		w.buf.Write(p[:room])
	}
	w.dropped += int64(len(p) - max(room, 0))
	return len(p), nil
}

// String returns the kept bytes and, if any were dropped, a note saying how
// many.
func (w *capWriter) String() string {
	if w.dropped == 0 {
		return w.buf.String()
	}
	return fmt.Sprintf("%s\n[... %d more bytes dropped]", w.buf.String(), w.dropped)
}
