package runner

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"assay"
	"assay/store"
	"assay/tally"
)

// A run is executed by the servers on its database together: the holder
// of its lease starts it, does its share and ends it; another server with
// the run's variables joins it (help), does a share and leaves when no
// sample is left to claim. Each claims whole samples before doing their
// tasks (store.ClaimSamples), so that no task is done by two; a process
// that dies loses its claims with its row, and the lease holder does what
// they left at the end. The run's max_concurrent is shared among its
// executors. A run with a budget, a stopping rule, or whose calls go in
// batches, is executed by its lease holder alone: a budget holds to a task
// only where every reservation is seen (budget.go), the rule orders its
// samples, and a batch's lines are the lease holder's to poll. So is a run
// in a SQLite file, which the processes of one host share: more of them
// add no connections.

// claimAhead is the fewest samples a process claims at once.
const claimAhead = 16

// executorBeat is how often a process executing a run renews its row,
// learns how many share the run and reads the run's cost.
const executorBeat = 2 * time.Second

// settlingBeat is how often it renews its row while the shares settle
// (one above its share, or one not yet known to all, after a process
// joined): the others learn sooner that it has come down to its share, or
// that it knows of them, and start their own.
const settlingBeat = 200 * time.Millisecond

// spreads says whether a run's tasks may be shared among servers.
func (m *Manager) spreads(run *store.Run) bool {
	cfg := run.Config
	return m.db.Postgres() && cfg != nil && cfg.Stop == nil && cfg.Batch == nil && run.BudgetUSD <= 0
}

// share is the part of a run's concurrency of the process at place among
// executors: the concurrency split evenly, the first ones one more.
func share(concurrency, executors, place int) int {
	n := concurrency / executors
	if place < concurrency%executors {
		n++
	}
	return max(n, 1)
}

// claims are the samples of a run this process claimed, and its share of
// the run's concurrency.
type claims struct {
	ex      *execution
	mine    map[int64]bool
	denied  map[int64]bool
	did     map[store.TaskKey]bool // tasks of its samples found done as it claimed them
	spread  bool                   // the run's samples are claimed: it may be shared
	skipped bool                   // a task was left to another process's claim
	done    atomic.Int64
	limit   atomic.Int64 // tasks this process may have in flight
	others  atomic.Int64 // tasks the run's other executors had in flight at their last beat
	flying  atomic.Int64
	freed   chan struct{}
}

func newClaims(ex *execution) *claims {
	c := &claims{ex: ex, mine: map[int64]bool{}, denied: map[int64]bool{}, did: map[store.TaskKey]bool{}, freed: make(chan struct{}, 1)}
	c.limit.Store(int64(max(ex.spec.Execution.MaxConcurrent, 1)))
	return c
}

// ours says whether the task's sample is claimed by this process,
// claiming it (and the next unclaimed samples of rest) when nobody live
// holds it; a task found done as its sample was claimed is not (another
// process did it since this one planned). A database that cannot be
// written is waited for, the run paused, as a result's save waits.
func (c *claims) ours(ctx context.Context, rest []task) (bool, error) {
	row := rest[0].row
	switch {
	case c.mine[row]:
		return !c.did[rest[0].key()], nil
	case c.denied[row]:
		return false, nil
	}
	// A claim is for as many samples as this process's share of the
	// run's concurrency does at once (claimAhead at least), from a window
	// four times as wide: the run's other executors walk the same samples
	// in the same order, and a claim that finds the next ones taken takes
	// those after them instead of coming back empty.
	perSample := max(len(c.ex.run.Conditions)*max(c.ex.run.Repetitions, 1), 1)
	want := max(claimAhead, int(c.limit.Load())/perSample)
	ask := []int64{row}
	seen := map[int64]bool{row: true}
	for _, t := range rest[1:] {
		if len(ask) == 4*want {
			break
		}
		if !seen[t.row] && !c.mine[t.row] && !c.denied[t.row] {
			seen[t.row] = true
			ask = append(ask, t.row)
		}
	}
	var claimed store.Claimed
	ok := false
	err := c.ex.whileUnwritable(ctx, func(ctx context.Context) (err error) {
		claimed, err = c.ex.m.db.ClaimSamples(ctx, c.ex.run.ID, c.ex.m.holder, ask, want, store.HolderAlive)
		ok = err == nil
		return err
	})
	if !ok { // failed, or the run stopped first
		return false, err
	}
	for _, k := range claimed.Done {
		c.did[k] = true
	}
	for _, s := range claimed.Held {
		c.denied[s] = true
	}
	for _, s := range claimed.Got {
		c.mine[s] = true
	}
	return c.mine[row] && !c.did[rest[0].key()], nil
}

// forget drops what was denied, for the lease holder's last sweep: the
// processes that held those samples may be gone.
func (c *claims) forget() {
	clear(c.denied)
	c.skipped = false
}

// acquire waits until this process may start one more task within its
// share of the run's concurrency; false when ctx ends first.
func (c *claims) acquire(ctx context.Context) bool {
	all := int64(max(c.ex.spec.Execution.MaxConcurrent, 1))
	for {
		if n := c.flying.Add(1); n <= c.limit.Load() && n+c.others.Load() <= all {
			return true
		}
		c.flying.Add(-1)
		select {
		case <-c.freed:
		case <-ctx.Done():
			return false
		}
	}
}

// release frees a task's place.
func (c *claims) release() {
	c.flying.Add(-1)
	c.wake()
}

func (c *claims) wake() {
	select {
	case c.freed <- struct{}{}:
	default:
	}
}

// beat renews this process's row of the run every executorBeat until
// stop, and sets its share of the run's concurrency. It calls over when
// the run is no longer running (cancelled, or ended by its lease holder).
// stop waits for it.
func (c *claims) beat(ctx context.Context, over func(store.RunStatus)) (stop func()) {
	ex := c.ex
	all := int64(max(ex.spec.Execution.MaxConcurrent, 1))
	// once renews the row; soon says the shares are settling: this
	// process or another has more in flight than its share, or one may
	// not know of this one yet, and the next look comes sooner.
	once := func() (more, soon bool) {
		b, err := ex.m.db.BeatRun(ctx, ex.run.ID, ex.m.holder, ex.m.opts.LeaseTTL, int(c.done.Load()), func(b store.Beat) int {
			limit := int64(share(int(all), b.Executors, b.Place))
			c.limit.Store(limit)
			others := int64(b.Others)
			if b.Stale { // another may not know of this one yet: it may use the whole
				others = all
			}
			c.others.Store(others)
			flying := c.flying.Load()
			soon = b.Stale || flying > limit || others > all-limit
			return int(flying)
		}, store.HolderAlive)
		if err != nil {
			if ctx.Err() == nil && !errors.Is(err, assay.ErrNotFound) {
				ex.m.log.Error("renew run executor", "run_id", ex.run.ID, "err", err)
			}
			return ctx.Err() == nil, false
		}
		c.wake()
		if b.Status != store.RunRunning && b.Status != store.RunPending {
			over(b.Status)
			return false, false
		}
		return true, soon
	}
	// The first beat is made before any task starts: a process joining
	// learns its share, and what the others have in flight, first.
	more, soon := once()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for more {
			next := ex.beatEvery()
			if soon {
				next = min(next, settlingBeat)
			}
			t := time.NewTimer(next)
			select {
			case <-done:
				t.Stop()
				return
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			more, soon = once()
		}
	})
	return func() { close(done); wg.Wait() }
}

// joinable says whether this process may help execute a run another
// process holds: its tasks may be shared, this process has its
// variables, and a sample is left that nobody claimed.
func (m *Manager) joinable(ctx context.Context, run *store.Run) bool {
	if run.Status != store.RunRunning || !m.spreads(run) || importedError(run) != nil || len(m.unsetFor(run)) > 0 {
		return false
	}
	ok, err := m.db.UnclaimedWork(ctx, run.ID, len(run.Conditions)*max(run.Repetitions, 1), store.HolderAlive)
	if err != nil {
		m.log.Warn("unclaimed work", "run_id", run.ID, "err", err)
	}
	return ok
}

// startHelping executes a share of a run another process holds, in the
// background, until no sample is left to claim.
func (m *Manager) startHelping(id int64) error {
	ctx, cancel := context.WithCancel(m.base)
	h, ok, err := m.register(id, cancel)
	if err != nil || !ok {
		cancel()
		return err
	}
	go func() {
		defer cancel()
		if err := m.help(ctx, id, h); err != nil && ctx.Err() == nil {
			m.log.Error("helping run failed", "run_id", id, "err", err)
		}
		m.unregister(id, h)
	}()
	return nil
}

// help does the tasks of the samples this process can claim in a run
// another process holds. It never changes the run's status but to record
// a cancel made here, which the lease holder then obeys.
func (m *Manager) help(ctx context.Context, id int64, h *handle) error {
	defer func() {
		if h.cancelled.Load() {
			m.db.SetRunStatus(context.WithoutCancel(ctx), id, store.RunCancelled, "cancelled")
		}
	}()
	run, err := m.db.Run(ctx, id)
	if err != nil {
		return err
	}
	if run.Status != store.RunRunning || !m.spreads(run) {
		return nil
	}
	ex, ctx, err := m.readyExecution(ctx, run, h)
	if err != nil {
		return err
	}
	defer ex.close()
	if err := m.db.JoinRun(ctx, id, m.holder, m.opts.LeaseTTL); err != nil {
		return err
	}
	defer m.db.LeaveRun(context.WithoutCancel(ctx), id, m.holder)
	m.log.Info("helping run", "run_id", id)
	ex.claims = newClaims(ex)
	ex.claims.spread = true
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, tasks, err := ex.workersFor(ctx)
	if err != nil {
		return err
	}
	stop := ex.claims.beat(ctx, func(store.RunStatus) { cancel() })
	defer stop()
	w.run(ctx, tasks, max(ex.spec.Execution.MaxConcurrent, 1))
	ex.keeping.Wait()
	m.log.Info("left run", "run_id", id, "tasks", ex.claims.done.Load())
	return w.err()
}

// finished counts a task done here, for the executors' list.
func (c *claims) finished() { c.done.Add(1) }

// sweep, for the lease holder of a run shared with other processes, does
// what they left once its own feed ran out: it waits for the samples they
// hold and takes those of processes gone (their rows expired, or their
// pid gone on this host), until every task has a result or the run stops.
// It counts the run's results every sweepLook, so that the run ends as
// soon as the last is in, and looks for samples to take every beat.
func (ex *execution) sweep(ctx context.Context, w *workers, f *feed) (*feed, error) {
	c := ex.claims
	took := time.Now()
	for c.spread && c.skipped {
		if f.budgetHit || f.stoppedWhy != "" || w.err() != nil || ctx.Err() != nil {
			return f, nil
		}
		t := time.NewTimer(sweepLook)
		select {
		case <-ctx.Done():
			t.Stop()
			return f, nil
		case <-t.C:
		}
		v, err := tally.Of(ex.m.db).ResultsVersion(ctx, ex.run.ID)
		if err == nil && v.Count >= ex.run.TotalTasks {
			return f, nil
		}
		if err == nil && time.Since(took) < ex.beatEvery() {
			continue
		}
		took = time.Now()
		done, err := ex.m.db.DoneTasks(ctx, ex.run.ID)
		if err != nil {
			if ctx.Err() != nil {
				return f, nil
			}
			return nil, err
		}
		tasks := plan(ex.samples.refs, ex.run.Conditions, ex.run.Repetitions, done)
		if len(tasks) == 0 {
			return f, nil
		}
		c.forget()
		f = w.run(ctx, tasks, max(ex.spec.Execution.MaxConcurrent, 1))
	}
	return f, nil
}

// sweepLook is how often the lease holder of a shared run counts its
// results while others finish the samples they hold.
const sweepLook = 200 * time.Millisecond

// helpIfJoinable joins a run another process holds when it may
// (joinable); a failure to is logged, the next look tries again.
func (m *Manager) helpIfJoinable(ctx context.Context, id int64) {
	run, err := m.db.Run(ctx, id)
	if err != nil || !m.joinable(ctx, run) {
		return
	}
	if err := m.startHelping(id); err != nil {
		m.log.Warn("help run", "run_id", id, "err", err)
	}
}

// beatEvery is how often an executor renews its row: often enough that it
// never expires between two renewals.
func (ex *execution) beatEvery() time.Duration {
	return min(executorBeat, ex.m.opts.LeaseTTL/3)
}
