// Package runner executes runs: every sample under every condition, N times,
// each result and its scores committed the moment they exist.
package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"assay"
	"assay/runner/agent"
	"assay/runner/llm"
	"assay/store"
	"assay/tally"
)

// Options configures a Manager.
type Options struct {
	Logger     *slog.Logger
	HTTPClient *http.Client // for model and judge calls; nil: a fresh client
	Getenv     func(string) string
	// Sleep waits between retries; nil uses a timer. Tests inject one.
	Sleep func(ctx context.Context, d time.Duration) error
	// LeaseTTL is how long a run's lease lasts unless renewed; 0 is 30 s.
	LeaseTTL time.Duration
	// Program names this process in the leases of the runs it executes,
	// for whoever finds a run held: "assay serve", "assay run".
	Program string
	// IndexWhenIdle brings the response index up to date when the last
	// run executing in the background ends (assay serve: its searches
	// then find the run indexed); a foreground run leaves it to them.
	IndexWhenIdle bool
}

// Manager owns the runs executing in this process: it starts, cancels and
// resumes them, and stops them all on Close.
type Manager struct {
	db     *store.DB
	opts   Options
	log    *slog.Logger
	holder store.Holder // this process, in run leases

	base    context.Context
	stop    context.CancelFunc
	wg      sync.WaitGroup
	mu      sync.Mutex
	active  map[int64]*handle
	skipped map[int64]bool // unfinished runs this process lacks the variables of, said once

	limits   llm.Limits                       // one adaptive limit per endpoint and key, for every run
	auditing map[int64]bool                   // runs whose judge audit is under way here (StartAudit)
	counts   map[int64]map[string]*llm.Counts // what each run's calls met here, by condition (ratelimit.go)
}

// handle is one executing run.
type handle struct {
	cancel    context.CancelFunc
	cancelled atomic.Bool            // by a user, not by shutdown
	lost      atomic.Bool            // the lease went to another process
	paused    atomic.Pointer[string] // why the run waits for the database; nil when it does not
	// flights hold, per worker, when its task in hand started (Unix
	// nanoseconds; 0 while it has none): what InFlight reads.
	flights  atomic.Pointer[[]atomic.Int64]
	limiters atomic.Pointer[limiterSet] // its endpoints' adaptive limits, once prepared
	done     chan struct{}
}

// InFlight says how many of a run's tasks executing here are waiting on
// their calls, and how long the oldest has been: a provider that stalls
// shows as calls that do not come back, not as an ever later estimate.
func (m *Manager) InFlight(id int64) (n int, oldest time.Duration) {
	m.mu.Lock()
	h, ok := m.active[id]
	m.mu.Unlock()
	if !ok {
		return 0, 0
	}
	slots := h.flights.Load()
	if slots == nil {
		return 0, 0
	}
	now := time.Now().UnixNano()
	for i := range *slots {
		if started := (*slots)[i].Load(); started != 0 {
			n++
			oldest = max(oldest, time.Duration(now-started))
		}
	}
	return n, oldest
}

// New returns a manager over db.
func New(db *store.DB, opts Options) *Manager {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.LeaseTTL <= 0 {
		opts.LeaseTTL = defaultLeaseTTL
	}
	if n := agent.CleanMCPConfigs(); n > 0 {
		opts.Logger.Info("removed MCP config files of processes that are gone", "files", n)
	}
	base, stop := context.WithCancel(context.Background())
	return &Manager{
		db:     db,
		opts:   opts,
		log:    opts.Logger,
		holder: store.ThisProcess(opts.Program),
		base:   base,
		stop:   stop,
		active: map[int64]*handle{},
	}
}

// ErrClosed is returned when a run is started on a closed manager.
var ErrClosed = errors.New("runner: closed")

// register marks a run as executing here; false when it already is.
func (m *Manager) register(id int64, cancel context.CancelFunc) (*handle, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.base.Err() != nil {
		return nil, false, ErrClosed
	}
	if _, ok := m.active[id]; ok {
		return nil, false, nil
	}
	h := &handle{cancel: cancel, done: make(chan struct{})}
	m.active[id] = h
	m.wg.Add(1)
	return h, true, nil
}

// unregister marks a run as no longer executing here and says whether it
// was the last.
func (m *Manager) unregister(id int64, h *handle) (last bool) {
	m.mu.Lock()
	delete(m.active, id)
	last = len(m.active) == 0
	m.mu.Unlock()
	close(h.done)
	m.wg.Done()
	return last
}

// Active reports whether a run is executing in this process.
func (m *Manager) Active(id int64) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.active[id]
	return ok
}

// Start executes a run in the background. Starting a run that is already
// executing does nothing.
func (m *Manager) Start(id int64) error {
	ctx, cancel := context.WithCancel(m.base)
	h, ok, err := m.register(id, cancel)
	if err != nil || !ok {
		cancel()
		return err
	}
	go func() {
		_, err := m.execute(ctx, id, h)
		cancel()
		switch {
		case assay.ErrorCode(err) == assay.ECONFLICT:
			m.log.Debug("run left alone", "run_id", id, "reason", assay.ErrorMessage(err))
		case err != nil:
			m.log.Error("run failed", "run_id", id, "err", err)
		}
		if m.unregister(id, h) && m.opts.IndexWhenIdle {
			// Indexing its results while other runs execute would take
			// a core from them; the last to end does it.
			if err := tally.Of(m.db).CatchUpIndex(m.base); err != nil && m.base.Err() == nil {
				m.log.Warn(err.Error())
			}
		}
	}()
	return nil
}

// Execute runs a run in the foreground until it ends or ctx is done. When ctx
// ends first the run stays resumable and its status is returned as running.
func (m *Manager) Execute(ctx context.Context, id int64) (store.RunStatus, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stopOnClose := context.AfterFunc(m.base, cancel)
	defer stopOnClose()
	h, ok, err := m.register(id, cancel)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", assay.Errorf(assay.ECONFLICT, "run %d is already executing", id)
	}
	defer m.unregister(id, h)
	return m.execute(ctx, id, h)
}

// Cancel stops a run. A run not executing here is marked cancelled directly.
func (m *Manager) Cancel(ctx context.Context, id int64) error {
	m.mu.Lock()
	h, ok := m.active[id]
	m.mu.Unlock()
	if ok {
		h.cancelled.Store(true)
		h.cancel()
		<-h.done
		return nil
	}
	r, err := m.db.Run(ctx, id)
	if err != nil {
		return err
	}
	if r.Status.Finished() {
		return nil
	}
	return m.db.SetRunStatus(ctx, id, store.RunCancelled, "cancelled")
}

// Resume starts a cancelled, failed or budget-stopped run again; finished tasks
// are not redone.
func (m *Manager) Resume(ctx context.Context, id int64) error {
	run, err := m.db.Run(ctx, id)
	if err != nil {
		return err
	}
	if !Resumable(run.Status) {
		return assay.Errorf(assay.ECONFLICT, "run %d is %s: only a cancelled, failed or budget-stopped run can be resumed", id, run.Status)
	}
	if err := m.variablesSet(run); err != nil {
		return err
	}
	if err := m.db.AcquireLease(ctx, id, m.holder, m.opts.LeaseTTL, store.HolderAlive); err != nil {
		return err
	}
	if err := m.db.SetRunStatus(ctx, id, store.RunPending, ""); err != nil {
		return err
	}
	return m.Start(id)
}

// Retried is what a retry does again: tasks whose agent failed, and
// answers whose judging failed (only their failed judge calls are made
// again; the answer and the judge calls that succeeded are kept).
type Retried struct {
	Tasks   int `json:"tasks"`
	Rejudge int `json:"rejudged"`
}

// String says what is retried: "2 failed tasks and the judging of 3 answers".
func (r Retried) String() string {
	var parts []string
	if r.Tasks > 0 {
		parts = append(parts, count(r.Tasks, "failed task"))
	}
	if r.Rejudge > 0 {
		parts = append(parts, "the judging of "+count(r.Rejudge, "answer"))
	}
	return strings.Join(parts, " and ")
}

func count(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// ClearFailed prepares a finished run to do what failed again: it checks
// this process has the run's variables, takes its lease, and deletes the
// results of the failed tasks and of the answers whose judging failed,
// keeping those answers and their successful judge calls as the tasks'
// pending work, leaving the run pending. Execute or Start it next; the
// rest stays.
func (m *Manager) ClearFailed(ctx context.Context, id int64) (Retried, error) {
	run, err := m.db.Run(ctx, id)
	if err != nil {
		return Retried{}, err
	}
	if !run.Status.Finished() {
		return Retried{}, assay.Errorf(assay.ECONFLICT, "run %d is %s: its failed tasks can be retried once it is over", id, run.Status)
	}
	if err := importedError(run); err != nil {
		return Retried{}, err
	}
	if err := m.variablesSet(run); err != nil {
		return Retried{}, err
	}
	if err := m.db.AcquireLease(ctx, id, m.holder, m.opts.LeaseTTL, store.HolderAlive); err != nil {
		return Retried{}, err
	}
	tasks, rejudge, err := m.db.ClearFailed(ctx, id, keptForRejudging)
	if err != nil {
		m.db.ReleaseLease(context.WithoutCancel(ctx), id, m.holder)
	}
	return Retried{Tasks: tasks, Rejudge: rejudge}, err
}

// importedError is the error of doing anything again in a run imported from
// result files: it holds their answers and scores, not how to make them.
func importedError(run *store.Run) error {
	if run.Origin != store.OriginEEE {
		return nil
	}
	return assay.Errorf(assay.ECONFLICT, "run %d was imported from result files: it is finished and read-only", run.ID)
}

// CanExecute says why this process should not execute the run again (nil
// when it may): it was imported, or variables it needs are not set here.
// Executed without them, the run would end failed for a key not set where
// assay run --resume was typed.
func (m *Manager) CanExecute(ctx context.Context, id int64) error {
	run, err := m.db.Run(ctx, id)
	if err != nil {
		return err
	}
	if err := importedError(run); err != nil || run.Status == store.RunCompleted {
		return err
	}
	return m.variablesSet(run)
}

// RetryFailed does a finished run's failed tasks and judge calls again, in
// the background.
func (m *Manager) RetryFailed(ctx context.Context, id int64) (Retried, error) {
	r, err := m.ClearFailed(ctx, id)
	if err != nil {
		return Retried{}, err
	}
	return r, m.Start(id)
}

// Resumable reports whether a run of that status can be resumed by a user:
// one that stopped before its end. Pending and running runs resume by
// themselves when a process takes them up.
func Resumable(st store.RunStatus) bool {
	return st == store.RunCancelled || st == store.RunFailed || st == store.RunBudgetExhausted
}

// ResumeUnfinished starts every pending or running run, as after a restart,
// except those another live process is executing.
func (m *Manager) ResumeUnfinished(ctx context.Context) ([]int64, error) {
	ids, err := m.resumeIdle(ctx)
	for _, id := range ids {
		m.log.Info("resuming run", "run_id", id)
	}
	return ids, err
}

// Adopt starts, every interval until the manager closes, the unfinished
// runs that no live process holds: a run whose `assay run` was killed, or
// whose other server stopped, is taken over once its lease lapses.
func (m *Manager) Adopt(every time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.base.Err() != nil {
		return
	}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-m.base.Done():
				return
			case <-t.C:
			}
			if _, err := m.resumeIdle(m.base); err != nil {
				m.log.Error("adopt unfinished runs", "err", err)
			}
		}
	}()
}

// resumeIdle starts the unfinished runs that no process is executing.
func (m *Manager) resumeIdle(ctx context.Context) ([]int64, error) {
	ids, err := m.db.UnfinishedRuns(ctx)
	if err != nil {
		return nil, err
	}
	var started []int64
	for _, id := range ids {
		if m.Active(id) {
			continue
		}
		if m.heldElsewhere(ctx, id) {
			m.helpIfJoinable(ctx, id)
			continue
		}
		run, err := m.db.Run(ctx, id)
		if err != nil {
			return started, err
		}
		if !m.canTakeOver(run) {
			continue // its page says what is missing
		}
		if err := m.Start(id); err != nil {
			return started, fmt.Errorf("start run %d: %w", id, err)
		}
		started = append(started, id)
	}
	return started, nil
}

// Close stops every executing run, leaving each resumable, and waits for them.
func (m *Manager) Close(ctx context.Context) error {
	m.mu.Lock()
	m.stop()
	m.mu.Unlock()
	done := make(chan struct{})
	go func() { m.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("close runner: %w", ctx.Err())
	}
}
