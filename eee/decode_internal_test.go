package eee

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"
)

// instancesOf is a reader of an instances file of n lines, sample_idx
// counting from 0, with a blank line after every 50th and the lines
// broken ones replaced by text that is not JSON.
func instancesOf(n int, broken ...int) *reader {
	var b strings.Builder
	line := 0
	for i := range n {
		line++
		if slices.Contains(broken, line) {
			b.WriteString("{\"sample_idx\": \n")
		} else {
			fmt.Fprintf(&b, "{\"sample_idx\": \"%d\", \"input\": {\"raw\": %q}}\n", i, strings.Repeat("x", i%700))
		}
		if i%50 == 49 {
			b.WriteString("\n")
			line++
		}
	}
	return &reader{files: Files{InstancesName: "i.jsonl", Instances: Bytes([]byte(b.String()))}}
}

// The instances of a file of many batches come in the file's order with
// their line numbers; a line that does not decode stops them there with
// its own error, however far the workers decoded past it; an error of the
// caller stops them too, and nothing is left running.
func TestEachInstanceInOrder(t *testing.T) {
	const n = 1000 // a blank line after every 50th: line 1020 is the last
	var got []int
	err := instancesOf(n).eachInstance(func(line int, in *Instance) error {
		if want := len(got) + 1 + len(got)/50; line != want {
			return fmt.Errorf("instance %d at line %d, want %d", len(got), line, want)
		}
		if int(in.SampleIdx) != len(got) || len(in.Input.Raw) != len(got)%700 {
			return fmt.Errorf("line %d: sample_idx %d with %d characters, want %d", line, in.SampleIdx, len(in.Input.Raw), len(got))
		}
		got = append(got, line)
		return nil
	})
	if err != nil || len(got) != n || got[n-1] != 1019 {
		t.Fatalf("read %d instances, the last at line %v: %v", len(got), got[len(got)-1:], err)
	}

	for _, broken := range [][]int{{1}, {700}, {700, 900}, {1019}} {
		seen := 0
		err := instancesOf(n, broken...).eachInstance(func(line int, _ *Instance) error {
			seen++
			return nil
		})
		want := fmt.Sprintf("i.jsonl:%d: ", broken[0])
		if err == nil || !strings.HasPrefix(err.Error(), want) || seen != broken[0]-1-(broken[0]-1)/51 {
			t.Errorf("line %d broken: %d instances before the error %v, want the error %q", broken[0], seen, err, want)
		}
	}

	// A file whose reading fails after its 300th line: the lines before
	// come, then the failure.
	r := instancesOf(300)
	data := r.files.Instances
	failed := errors.New("the disk failed")
	r.files.Instances.Open = func() (io.ReadCloser, error) {
		rc, _ := data.Open()
		return io.NopCloser(io.MultiReader(rc, iotest.ErrReader(failed))), nil
	}
	seen := 0
	err = r.eachInstance(func(int, *Instance) error {
		seen++
		return nil
	})
	if !errors.Is(err, failed) || seen != 300 {
		t.Errorf("a file failing after 300 lines: %d instances, then %v", seen, err)
	}

	// Stopped by the caller: the file is closed when it returns, and its
	// goroutines end.
	stop := errors.New("enough")
	before := runtime.NumGoroutine()
	r = instancesOf(n)
	var closed atomic.Bool
	data = r.files.Instances
	r.files.Instances.Open = func() (io.ReadCloser, error) {
		rc, _ := data.Open()
		return closer{rc, &closed}, nil
	}
	seen = 0
	err = r.eachInstance(func(line int, _ *Instance) error {
		if seen++; seen == 130 {
			return stop
		}
		return nil
	})
	if err != stop || seen != 130 || !closed.Load() {
		t.Errorf("stopped at the 130th instance: %v after %d, the file closed: %v", err, seen, closed.Load())
	}
	for deadline := time.Now().Add(10 * time.Second); runtime.NumGoroutine() > before; runtime.Gosched() {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines 10 s after stopping, %d before", runtime.NumGoroutine(), before)
		}
	}
}

// closer notes that its reader was closed.
type closer struct {
	io.ReadCloser
	closed *atomic.Bool
}

func (c closer) Close() error {
	c.closed.Store(true)
	return c.ReadCloser.Close()
}
