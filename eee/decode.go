package eee

import (
	"bytes"
	"errors"
	"runtime"
	"sync"
)

// Decoding the instances' lines was half the CPU of an import, done in the
// same goroutine as what was done with them (checking them, storing their
// results): a 150,000-result run's 445 MB took 47 s to import. The lines
// are decoded a batch at a time on a worker per core, while the caller
// handles the instances before them, in the file's order.

// A batch ends after batchLines lines or batchBytes bytes of them.
const (
	batchLines = 64
	batchBytes = 1 << 20
)

// lineBatch is lines of the instances and what decoding them gave.
type lineBatch struct {
	lines []int // their numbers in the file
	raws  [][]byte
	size  int
	ins   []*Instance
	errs  []error
	err   error         // the file's reading failed after the batch's lines
	done  chan struct{} // closed once the lines are decoded
}

func (b *lineBatch) decode(decode func(line int, raw []byte) (*Instance, error)) {
	b.ins, b.errs = make([]*Instance, len(b.raws)), make([]error, len(b.raws))
	for i, raw := range b.raws {
		b.ins[i], b.errs[i] = decode(b.lines[i], raw)
	}
	b.raws = nil
	close(b.done)
}

var errStopped = errors.New("stopped")

// eachInstance calls fn with each instance of the file and the number of
// its line, in order, until fn returns an error; a line that does not
// decode gives decode's error in its turn, after the lines before it.
func (r *reader) eachInstance(fn func(line int, in *Instance) error) error {
	workers := runtime.GOMAXPROCS(0)
	work := make(chan *lineBatch)
	order := make(chan *lineBatch, workers) // the batches read, in order; bounds those held
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for b := range work {
				b.decode(r.instance)
			}
		})
	}
	wg.Go(func() { r.batchLines(order, work, stop) })
	defer func() {
		close(stop)
		wg.Wait()
	}()
	for b := range order {
		<-b.done
		for i, line := range b.lines {
			if b.errs[i] != nil {
				return b.errs[i]
			}
			if err := fn(line, b.ins[i]); err != nil {
				return err
			}
		}
		if b.err != nil {
			return b.err
		}
	}
	return nil
}

// batchLines reads the file's lines into batches, each sent in order and
// to a worker to decode, until the lines end or stop is closed. The last
// batch carries the reading's error.
func (r *reader) batchLines(order, work chan<- *lineBatch, stop <-chan struct{}) {
	defer close(work)
	defer close(order)
	send := func(b *lineBatch) bool {
		select {
		case order <- b:
		case <-stop:
			return false
		}
		select {
		case work <- b:
			return true
		case <-stop:
			return false
		}
	}
	b := &lineBatch{done: make(chan struct{})}
	err := eachLine(r.files.Instances, r.files.InstancesName, func(line int, raw []byte) error {
		b.lines, b.raws, b.size = append(b.lines, line), append(b.raws, bytes.Clone(raw)), b.size+len(raw)
		if len(b.lines) < batchLines && b.size < batchBytes {
			return nil
		}
		if !send(b) {
			return errStopped
		}
		b = &lineBatch{done: make(chan struct{})}
		return nil
	})
	if err != errStopped {
		b.err = err
		send(b)
	}
}
