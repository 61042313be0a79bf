package web

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"assay/report"
	"assay/route"
)

// replayJobs are the routing replays under way, by key: a replay over a
// run the size of MMLU takes a quarter of a minute, longer than a page
// should keep a reader waiting, and one reader's reloads must not start
// it again. A server runs at most maxReplays at once — anyone with a share
// link may ask for one with new settings — and a replay nobody waits for
// any more (the page polls while it is under way) is stopped.
type replayJobs struct {
	mu      sync.Mutex
	jobs    map[string]*replayJob
	running int
}

type replayJob struct {
	done    chan struct{}
	res     *report.Routing
	err     error
	waiters int       // requests waiting for it now
	asked   time.Time // when a request last asked for it
}

// Replay limits.
const (
	// defaultReplayWait is how long the Routing page waits for a replay
	// when Config.ReplayWait is 0.
	defaultReplayWait = 2 * time.Second
	// maxReplays is how many replays a server runs at once.
	maxReplays = 2
	// replayAbandoned is how long a replay runs on after the last request
	// for it ended (the page asks again every 2 s while it waits).
	replayAbandoned = 10 * time.Second
)

// errReplaysBusy is the answer when maxReplays are under way already.
var errReplaysBusy = errors.New("replays busy")

// replayKey names a replay of a run's report at a version ("" for the first
// of the run file's conditions).
func replayKey(run int64, version, condition string, opt route.Options) string {
	return fmt.Sprintf("%d/%s/%s/%d/%d/%v", run, version, condition, opt.Orders, opt.Seed, opt.Weights)
}

// replayWait is how long the Routing page waits for a replay.
func (s *Server) replayWait() time.Duration {
	if s.cfg.ReplayWait == 0 {
		return defaultReplayWait
	}
	return max(s.cfg.ReplayWait, 0)
}

// replay returns the replay kept under key, or starts compute (once, however
// many ask) and waits for it up to wait, or until ctx ends: nil and no error
// while it is still under way, errReplaysBusy when it cannot start yet. A
// replay done is kept with the others; one that failed is told to the next
// request for it, and then forgotten.
func (s *Server) replay(ctx context.Context, key string, wait time.Duration, compute func(context.Context) (*report.Routing, error)) (*report.Routing, error) {
	if res, ok := s.replays.Get(key); ok {
		return res, nil
	}
	job, kept, err := s.replayJob(key, compute)
	if job == nil {
		return kept, err
	}
	defer s.leaveReplay(job)
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-job.done:
	case <-timer.C:
		return nil, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if job.err != nil {
		q := &s.replaying
		q.mu.Lock()
		if q.jobs[key] == job {
			delete(q.jobs, key)
		}
		q.mu.Unlock()
	}
	return job.res, job.err
}

// replayJob is the job of key, started when there is none and a place for
// it, with the caller counted among its waiters; else the replay when it
// was kept meanwhile, or errReplaysBusy when there is no place.
func (s *Server) replayJob(key string, compute func(context.Context) (*report.Routing, error)) (*replayJob, *report.Routing, error) {
	q := &s.replaying
	q.mu.Lock()
	defer q.mu.Unlock()
	job := q.jobs[key]
	if job == nil {
		// A replay done since the caller looked is kept before its job goes.
		if res, ok := s.replays.Get(key); ok {
			return nil, res, nil
		}
		if q.running >= maxReplays {
			return nil, nil, errReplaysBusy
		}
		job = &replayJob{done: make(chan struct{})}
		if q.jobs == nil {
			q.jobs = map[string]*replayJob{}
		}
		q.jobs[key] = job
		q.running++
		s.background(func(ctx context.Context) { s.runReplay(ctx, key, job, compute) })
	}
	job.waiters++
	job.asked = time.Now()
	return job, nil, nil
}

// leaveReplay notes that a request stopped waiting for job.
func (s *Server) leaveReplay(job *replayJob) {
	s.replaying.mu.Lock()
	job.waiters--
	job.asked = time.Now()
	s.replaying.mu.Unlock()
}

// runReplay computes job, and stops it when nobody has waited for it for
// replayAbandoned: its key is then free for whoever asks next.
func (s *Server) runReplay(ctx context.Context, key string, job *replayJob, compute func(context.Context) (*report.Routing, error)) {
	q := &s.replaying
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	computed := make(chan struct{})
	go func() {
		defer close(computed)
		job.res, job.err = compute(ctx)
	}()
	tick := time.NewTicker(s.replayCheck())
	defer tick.Stop()
	abandoned := false
	for done := false; !done; {
		select {
		case <-computed:
			done = true
		case <-tick.C:
			q.mu.Lock()
			if job.waiters == 0 && time.Since(job.asked) > s.replayAbandon() && !abandoned {
				abandoned = true
				cancel()
			}
			q.mu.Unlock()
		}
	}
	q.mu.Lock()
	q.running--
	switch {
	case job.err == nil:
		s.replays.Put(key, job.res)
		delete(q.jobs, key)
	case abandoned:
		delete(q.jobs, key) // nobody to tell
	}
	q.mu.Unlock()
	close(job.done)
}

// replayAbandon and replayCheck are replayAbandoned and how often it is
// looked at; tests make them short.
func (s *Server) replayAbandon() time.Duration {
	if s.cfg.replayAbandon > 0 {
		return s.cfg.replayAbandon
	}
	return replayAbandoned
}

func (s *Server) replayCheck() time.Duration { return min(s.replayAbandon()/4, time.Second) }

// replayInTurn waits for the replay of key, and for a place to start it
// while the server runs maxReplays others: an export carries its replay.
func (s *Server) replayInTurn(ctx context.Context, key string, compute func(context.Context) (*report.Routing, error)) (*report.Routing, error) {
	for {
		res, err := s.replay(ctx, key, time.Duration(math.MaxInt64), compute)
		if !errors.Is(err, errReplaysBusy) {
			return res, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}
