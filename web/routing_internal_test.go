package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"assay/report"
	"assay/store"
)

// A replay is started once however often it is asked for while under way,
// and kept; one that failed is told to the next request, then tried again.
func TestAReplayStartsOnce(t *testing.T) {
	s := &Server{cfg: Config{ReplayWait: -1}}
	s.base, s.stop = context.WithCancel(context.Background())
	release := make(chan struct{})
	var calls atomic.Int32
	compute := func(context.Context) (*report.Routing, error) {
		calls.Add(1)
		<-release
		return &report.Routing{RunID: 7}, nil
	}
	for range 3 {
		if res, err := s.replay(t.Context(), "k", s.replayWait(), compute); res != nil || err != nil {
			t.Fatalf("a replay under way returned %v, %v", res, err)
		}
	}
	close(release)
	deadline := time.Now().Add(time.Minute) // a bound on a failure, not a wait
	for {
		res, err := s.replay(t.Context(), "k", s.replayWait(), compute)
		if err != nil {
			t.Fatal(err)
		}
		if res != nil {
			if res.RunID != 7 {
				t.Errorf("replay %+v", res)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the replay never came")
		}
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("the replay ran %d times", n)
	}

	s.cfg.ReplayWait = time.Hour // waits for the outcome
	failing := func(context.Context) (*report.Routing, error) {
		calls.Add(1)
		return nil, errors.New("the store is gone")
	}
	if _, err := s.replay(t.Context(), "bad", s.replayWait(), failing); err == nil {
		t.Error("a failed replay was not told")
	}
	if _, err := s.replay(t.Context(), "bad", s.replayWait(), failing); err == nil || calls.Load() != 3 {
		t.Errorf("a failed replay was not tried again (%d runs): %v", calls.Load(), err)
	}
}

// A server runs a bounded number of replays at once: a request for another
// is told so (errReplaysBusy: the page answers 429) until one ends. A replay
// nobody waits for any more is stopped, and its place freed.
func TestReplaysAreBoundedAndStopWhenNobodyWaits(t *testing.T) {
	s := &Server{cfg: Config{ReplayWait: -1, replayAbandon: 40 * time.Millisecond}}
	s.base, s.stop = context.WithCancel(context.Background())
	defer s.stop()
	stopped := make(chan string, maxReplays)
	blocking := func(key string) func(context.Context) (*report.Routing, error) {
		return func(ctx context.Context) (*report.Routing, error) {
			<-ctx.Done() // runs until it is stopped
			stopped <- key
			return nil, ctx.Err()
		}
	}
	for i := range maxReplays {
		key := fmt.Sprintf("seed-%d", i)
		if res, err := s.replay(t.Context(), key, s.replayWait(), blocking(key)); res != nil || err != nil {
			t.Fatalf("replay %s: %v, %v", key, res, err)
		}
	}
	if _, err := s.replay(t.Context(), "one-more", s.replayWait(), blocking("one-more")); !errors.Is(err, errReplaysBusy) {
		t.Fatalf("a replay past the bound: %v, want errReplaysBusy", err)
	}
	// Nobody asks again: both stop, and their places are free.
	for range maxReplays {
		<-stopped
	}
	done := make(chan struct{})
	quick := func(context.Context) (*report.Routing, error) { return &report.Routing{RunID: 9}, nil }
	go func() {
		defer close(done)
		for {
			res, err := s.replay(t.Context(), "one-more", time.Hour, quick)
			if errors.Is(err, errReplaysBusy) {
				runtime.Gosched()
				continue // the stopped ones are still leaving
			}
			if err != nil || res == nil || res.RunID != 9 {
				t.Errorf("the replay after the others stopped: %v, %v", res, err)
			}
			return
		}
	}()
	<-done
}

// The routing page of a run of one model says so, without claiming every
// model answered every sample, and without computing the run's report,
// which at 150,000 results took 0.1–0.3 s for that line.
func TestRoutingOfOneModelComputesNoReport(t *testing.T) {
	db, d, rows := storedSamples(t, 3)
	run := storedRun(t, db, d, rows, store.RunCompleted)
	s, err := New(db, Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	page := getOK(t, s, fmt.Sprintf("/runs/%d/routing", run))
	if !strings.Contains(page, "This run has one model") {
		t.Fatal("the routing page of a run of one model does not say so")
	}
	if strings.Contains(page, "answered by every model") {
		t.Error("the routing page of a run of one model says every model answered every sample")
	}
	if n := s.model.ReportsKept(); n != 0 {
		t.Errorf("%d reports computed for the routing page of a run of one model", n)
	}
}
