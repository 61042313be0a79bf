package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
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
		if res, err := s.replay("k", s.replayWait(), compute); res != nil || err != nil {
			t.Fatalf("a replay under way returned %v, %v", res, err)
		}
	}
	close(release)
	deadline := time.Now().Add(time.Minute) // a bound on a failure, not a wait
	for {
		res, err := s.replay("k", s.replayWait(), compute)
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
	if _, err := s.replay("bad", s.replayWait(), failing); err == nil {
		t.Error("a failed replay was not told")
	}
	if _, err := s.replay("bad", s.replayWait(), failing); err == nil || calls.Load() != 3 {
		t.Errorf("a failed replay was not tried again (%d runs): %v", calls.Load(), err)
	}
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
