package runner

import (
	"assay/internal/redact"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"assay"
	"assay/internal/text"
	"assay/runner/agent"
	"assay/runner/assert"
	"assay/runner/llm"
	"assay/store"
	"assay/tally"
)

// execute runs one run to its end (or until ctx is done) and records its status.
func (m *Manager) execute(ctx context.Context, id int64, h *handle) (status store.RunStatus, err error) {
	defer func() {
		// Cancelled while it started (its lease, its run read, its batches
		// taken up): the steps cut short leave it cancelled all the same,
		// not pending.
		if err != nil && h.cancelled.Load() {
			status, err = store.RunCancelled, m.finish(id, store.RunCancelled, "cancelled")
		}
	}()
	if err := m.db.AcquireLease(ctx, id, m.holder, m.opts.LeaseTTL, store.HolderAlive); err != nil {
		return "", err
	}
	defer m.db.ReleaseLease(context.WithoutCancel(ctx), id, m.holder)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stopBeat := m.heartbeat(ctx, id, h, cancel)
	defer stopBeat()
	run, err := m.db.Run(ctx, id)
	if err != nil {
		return "", err
	}
	// A completed or imported run is left as it is: nothing is left to do,
	// and an imported one has no agent to do it with.
	if err := importedError(run); err != nil {
		return "", err
	}
	if run.Status == store.RunCompleted {
		return run.Status, nil
	}
	ex, ctx, err := m.readyExecution(ctx, run, h)
	var prepared *prepareError
	if errors.As(err, &prepared) {
		return store.RunFailed, m.finish(id, store.RunFailed, prepared.Error())
	}
	if err != nil {
		return "", err
	}
	defer ex.close()
	if started, err := ex.startBatches(ctx); err != nil {
		return "", err
	} else if started {
		defer func() {
			cancel()
			ex.batch.wait()
		}()
	}
	if err := m.db.SetRunStatus(ctx, id, store.RunRunning, ""); err != nil {
		return "", err
	}
	if err := m.db.JoinRun(ctx, id, m.holder, m.opts.LeaseTTL); err != nil {
		return "", err
	}
	defer m.db.LeaveRun(context.WithoutCancel(ctx), id, m.holder)
	ex.claims = newClaims(ex)
	ex.claims.spread = m.spreads(run)
	m.log.Info("run started", "run_id", id, "dataset", ex.dataset.Name, "tasks", run.TotalTasks)
	status, msg, err := ex.loop(ctx)
	return m.ended(ctx, ex, status, msg, err)
}

// prepareError is a run that cannot be made ready (its config, its agent):
// it fails, saying why.
type prepareError struct{ err error }

func (e *prepareError) Error() string { return e.err.Error() }

// readyExecution makes run ready to execute in this process: its dataset,
// its samples, its agent and judges, what its tasks kept of work under way;
// and ctx carrying the run's secrets, so that texts cut short under it (an
// error body's snippet, a tool's excerpt, a command's stderr) are cleaned
// of them before their cut. The caller closes the execution.
func (m *Manager) readyExecution(ctx context.Context, run *store.Run, h *handle) (*execution, context.Context, error) {
	ds, err := m.db.Dataset(ctx, run.DatasetID)
	if err != nil {
		return nil, ctx, err
	}
	samples, err := newSampleSource(ctx, m.db, ds.ID)
	if err != nil {
		return nil, ctx, err
	}
	ex, err := m.prepare(run, ds, samples)
	if err != nil {
		return nil, ctx, &prepareError{err}
	}
	ex.h = h
	h.limiters.Store(ex.limiters)
	ctx = redact.With(ctx, redact.Secrets(ex.secrets))
	if ex.pending, err = m.db.PendingWork(ctx, run.ID); err != nil {
		ex.close()
		return nil, ctx, err
	}
	return ex, ctx, nil
}

// startBatches takes up the run's batches when its calls go in batches;
// true when they do, and the caller waits for them before it ends.
func (ex *execution) startBatches(ctx context.Context) (bool, error) {
	b := ex.spec.Batch
	if b == nil || !(b.Judge && ex.eval.asksJudges() || b.Agent) {
		return false, nil
	}
	var err error
	if ex.batch, err = newBatches(ctx, ex, b, ex.eval.clients); err != nil {
		return false, err
	}
	if b.Judge {
		ex.eval.batch = ex.batch
	}
	return true, nil
}

// ended records how the run's loop ended. A stop comes first: a query cut
// short by it is no failure of the run. A run whose lease another process
// took, or whose server stops, stays running, to be resumed.
func (m *Manager) ended(ctx context.Context, ex *execution, status store.RunStatus, msg string, err error) (store.RunStatus, error) {
	id, h := ex.run.ID, ex.h
	switch {
	case h.cancelled.Load():
		status, msg = store.RunCancelled, "cancelled"
		if ex.batch != nil {
			// A batch being sent as the run was cancelled is kept first,
			// then cancelled with the others.
			ex.batch.wait()
			ex.batch.cancel()
		}
	case h.lost.Load():
		m.log.Info("run continues in the process that took its lease", "run_id", id)
		return store.RunRunning, nil
	case ctx.Err() != nil:
		m.log.Info("run paused, resumable", "run_id", id)
		return store.RunRunning, nil
	case err != nil:
		status, msg = store.RunFailed, err.Error()
	}
	if ex.run.RejudgedFrom != 0 {
		if _, err := m.db.CarryReviews(context.WithoutCancel(ctx), id); err != nil {
			m.log.Warn("reviews of the answers judged again not carried", "run_id", id, "error", err)
		}
	}
	return status, m.finish(id, status, ex.secrets.clean(msg))
}

func (m *Manager) finish(id int64, status store.RunStatus, msg string) error {
	m.log.Info("run ended", "run_id", id, "status", status, "message", msg)
	if err := m.db.SetRunStatus(context.Background(), id, status, msg); err != nil {
		return err
	}
	return m.db.EndRunExecution(context.Background(), id)
}

// workersFor plans the run's tasks still to do and makes the workers
// that do them, its cost so far and a task's expected cost known.
func (ex *execution) workersFor(ctx context.Context) (*workers, []task, error) {
	done, err := ex.m.db.DoneTasks(ctx, ex.run.ID)
	if err != nil {
		return nil, nil, err
	}
	cost, err := tally.Of(ex.m.db).RunCost(ctx, ex.run.ID)
	if err != nil {
		return nil, nil, err
	}
	if ex.stopping, err = ex.startStopping(ctx); err != nil {
		return nil, nil, err
	}
	var tasks []task
	switch {
	case ex.stopping != nil:
		ex.samples.inOrder(ex.stopping.order)
		tasks = planInOrder(ex.samples.refs, ex.stopping.order, ex.run.Conditions, ex.run.Repetitions, done)
	case ex.claims != nil && ex.claims.spread:
		// Claims are of whole samples: taken one after another, whole, a
		// run's samples are not all claimed by its first pass, and a server
		// joining late finds some nobody has started.
		tasks = planInOrder(ex.samples.refs, fileOrder(len(ex.samples.refs)), ex.run.Conditions, ex.run.Repetitions, done)
	default:
		tasks = plan(ex.samples.refs, ex.run.Conditions, ex.run.Repetitions, done)
	}
	w := &workers{ex: ex, cost: cost}
	w.finished = make(chan struct{}, 1)
	if ex.run.BudgetUSD > 0 && ex.run.TotalTasks > 0 {
		var err error
		estimate := EstimateEach
		if ex.run.RejudgedFrom != 0 {
			estimate = EstimateJudging // its answers are made
		}
		e := estimate(ex.spec, ex.dataset.Kind, ex.m.db.AllSamples(ctx, ex.dataset.ID, &err), ex.run.Conditions, ex.prices)
		if err != nil {
			return nil, nil, err
		}
		w.guess = e.CostUSD / float64(ex.run.TotalTasks)
	}
	return w, tasks, nil
}

// loop feeds the tasks still to do to the run's workers and returns how the run ended.
func (ex *execution) loop(ctx context.Context) (store.RunStatus, string, error) {
	w, tasks, err := ex.workersFor(ctx)
	if err != nil {
		return "", "", err
	}
	stopBeat := ex.claims.beat(ctx, func(store.RunStatus) {})
	defer stopBeat()
	f := w.run(ctx, tasks, max(ex.spec.Execution.MaxConcurrent, 1))
	if f, err = ex.sweep(ctx, w, f); err != nil {
		return "", "", err
	}
	ex.keeping.Wait() // a run resumed next reads what its tasks kept
	if err := w.err(); err != nil {
		return "", "", err
	}
	if ctx.Err() != nil {
		return "", "", nil
	}
	if f.budgetHit {
		return store.RunBudgetExhausted, fmt.Sprintf("budget of $%.4g reached: $%.4g spent", ex.run.BudgetUSD, w.spent()), nil
	}
	if f.stoppedWhy == "" {
		return ex.outcome(ctx)
	}
	if err := ex.recordStop(ctx, f); err != nil {
		return "", "", err
	}
	status, msg, err := ex.outcome(ctx)
	if status == store.RunCompleted && msg == "" {
		msg = fmt.Sprintf("%sthe rule held after %d samples: %s.", StoppedEarly, f.decidedAt, f.stoppedWhy)
	}
	return status, msg, err
}

// outcome is completed when every task has a result; failed when every
// task of a condition failed, which says which and with what message.
func (ex *execution) outcome(ctx context.Context) (store.RunStatus, string, error) {
	progress, err := tally.Of(ex.m.db).RunProgress(ctx, ex.run.ID)
	if err != nil {
		return "", "", err
	}
	var failed []store.ConditionProgress
	var results, errs int
	for _, p := range progress {
		results += p.Done
		errs += p.Errors
		if p.Done > 0 && p.Errors == p.Done {
			failed = append(failed, p)
		}
	}
	if len(failed) == 0 {
		return store.RunCompleted, "", nil
	}
	top, err := ex.m.db.TopErrors(ctx, ex.run.ID, 1)
	if err != nil {
		return "", "", err
	}
	mostOften := func(cond string) string {
		for _, e := range top[cond] {
			if !e.Judge {
				return fmt.Sprintf(" — most often (%d×): %s", e.Count, text.Clip(e.Message, 200))
			}
		}
		return ""
	}
	if results > 0 && errs == results {
		msg := fmt.Sprintf("every one of %d tasks failed", results)
		if len(failed) == 1 {
			msg += mostOften(failed[0].Condition)
		}
		return store.RunFailed, msg, nil
	}
	var parts []string
	for _, p := range failed {
		parts = append(parts, fmt.Sprintf("every one of %d tasks under %q failed%s", p.Done, p.Condition, mostOften(p.Condition)))
	}
	return store.RunFailed, strings.Join(parts, "; "), nil
}

// workers execute tasks concurrently and keep the run's cost.
type workers struct {
	ex      *execution
	judging sync.WaitGroup // answers being judged apart from their workers (later)
	mu      sync.Mutex
	cost    float64
	saveErr error
	budgetState
}

func (w *workers) spent() float64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.cost
}

func (w *workers) err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.saveErr
}

// fail ends the run with err unless it has an error already.
func (w *workers) fail(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.saveErr == nil {
		w.saveErr = err
	}
}

// run starts n workers, which take the tasks one after another until the
// tasks, the budget, the stopping rule or ctx run out, and waits. Its
// feed says what stopped it.
func (w *workers) run(ctx context.Context, tasks []task, n int) *feed {
	f := &feed{w: w, tasks: tasks, lastAt: -1}
	flights := make([]atomic.Int64, n)
	if w.ex.h != nil {
		w.ex.h.flights.Store(&flights)
	}
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var saving []chan struct{} // the worker's results awaiting their commit, oldest first
			for {
				j, ok := f.next(ctx)
				if !ok {
					break
				}
				if w.ex.agentBatched(j.t.condition) {
					w.ex.claims.release()
					w.later(ctx, func() *store.Result { return w.whole(ctx, j.t) }, j.reserved) // the agent answers in a batch, hours later maybe
					continue
				}
				flights[i].Store(time.Now().UnixNano())
				res, judge := w.do(ctx, j.t)
				flights[i].Store(0)
				if judge != nil && w.ex.eval.batch != nil {
					w.ex.claims.release()
					w.later(ctx, judge, j.reserved) // its judges answer in a batch, hours later maybe
					continue
				}
				if judge != nil {
					res = judge()
				}
				w.ex.claims.release()
				if res == nil {
					w.release(j.reserved)
					continue
				}
				if len(saving) == savesAhead {
					<-saving[0]
					saving = saving[1:]
				}
				saving = append(saving, w.saveBehind(ctx, res, j.reserved))
				w.ex.claims.finished()
			}
			for _, saved := range saving {
				<-saved
			}
		}()
	}
	wg.Wait()
	w.judging.Wait()
	return f
}

// later judges an answer and saves its result while the worker goes on:
// with batched judges a worker waiting for its answer's judgement would
// send batches of as many lines as there are workers.
func (w *workers) later(ctx context.Context, judge func() *store.Result, reserved float64) {
	w.judging.Add(1)
	go func() {
		defer w.judging.Done()
		res := judge()
		if res == nil {
			w.release(reserved)
			return
		}
		<-w.saveBehind(ctx, res, reserved)
	}()
}

// feed hands a run's tasks to its workers: a worker that is free takes the
// next itself, its sample read and its cost reserved, unless the run is to
// stop. A worker taking its task itself waits for no loop to be
// scheduled. The cost is reserved as the task starts.
type feed struct {
	w         *workers
	mu        sync.Mutex // held while a task is taken
	tasks     []task
	at        int  // the next task's place in tasks
	stopped   bool // by an error, the budget, a pause ended by ctx, or ctx
	budgetHit bool
	// With a stopping rule: the sample of the last task handed out, and
	// why the rule stopped the run ("" while it has not).
	lastAt     int
	stoppedWhy string
	decidedAt  int // whole samples the rule had seen when it held
}

// next is the task a worker does next; false when there is none to do.
func (f *feed) next(ctx context.Context) (job, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.skipOthers(ctx) {
		return f.stop()
	}
	t := f.tasks[f.at]
	if st := f.w.ex.stopping; st != nil && t.at != f.lastAt {
		// Whole samples: the rule is asked only before a sample's first task.
		if ok, why, at := st.decided(); ok {
			f.stoppedWhy, f.decidedAt = why, at
			return f.stop()
		}
	}
	var err error
	if t.sample, err = f.w.ex.samples.get(ctx, t.at); err != nil {
		f.w.fail(err)
		return f.stop()
	}
	reserved, ok := f.w.reserve(ctx, f.w.ex.run.BudgetUSD)
	if !ok {
		f.budgetHit = ctx.Err() == nil
		return f.stop()
	}
	if f.w.err() != nil || !f.w.ex.waitWhilePaused(ctx) || ctx.Err() != nil || !f.w.ex.claims.acquire(ctx) {
		f.w.release(reserved)
		return f.stop()
	}
	f.at++
	f.lastAt = t.at
	return job{t, reserved}, true
}

// skipOthers moves past the tasks of samples another process holds, on a
// run shared among processes, to the next task of this one; false when
// none is left, or the feed has stopped.
func (f *feed) skipOthers(ctx context.Context) bool {
	c := f.w.ex.claims
	for {
		if f.stopped || f.at == len(f.tasks) || ctx.Err() != nil {
			return false
		}
		if !c.spread {
			return true
		}
		ours, err := c.ours(ctx, f.tasks[f.at:])
		if err != nil {
			if ctx.Err() == nil {
				f.w.fail(err)
			}
			return false
		}
		if ours {
			return true
		}
		if !c.mine[f.tasks[f.at].row] {
			c.skipped = true // another process's to do
		}
		f.at++
	}
}

// stop gives no task to this worker, nor to any after it.
func (f *feed) stop() (job, bool) {
	f.stopped = true
	return job{}, false
}

// savesAhead is how many of a worker's results may await their commit
// while it goes on: past that it waits for the oldest. Against an endpoint
// that answers at once, a worker allowed one waited for each commit and
// the committer's batches stayed small; allowed eight, a batch holds about
// sixty results and their kept parts (store's maxBatch). With the latency
// of a real model the commits keep up and none waits.
const savesAhead = 8

// saveBehind commits res while its worker goes on with the next task, and
// closes the channel it returns once res is committed (or failed). Only
// then is the task counted, its cost added and its reservation freed, so
// the budget holds as before, and at most savesAhead results per worker
// await their commit. The calls of the next task no longer wait for the
// commit of the last (a tenth of each task's time at concurrency 200).
func (w *workers) saveBehind(ctx context.Context, res *store.Result, reserved float64) chan struct{} {
	// The stopping rule sees the result now, not once it is committed: the
	// run then stops taking samples as soon as the rule holds, and only
	// those under way finish after it.
	if st := w.ex.stopping; st != nil {
		st.add(res)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.save(ctx, res)
		w.release(reserved)
	}()
	return done
}

// do executes one task and returns its result to commit; nil when the
// task was cut short by cancellation, which is not recorded, so a resumed
// run does it again. An answer to judge comes with judge, which judges it
// and returns the result (nil when cut short).
func (w *workers) do(ctx context.Context, t task) (*store.Result, func() *store.Result) {
	ex := w.ex
	ctx = llm.WithCounts(ctx, ex.counts[t.condition.Name])
	res := &store.Result{RunID: ex.run.ID, SampleRow: t.sample.ID, Condition: t.condition.Name, Repetition: t.repetition}
	done := ex.pending[t.key()]
	if ex.run.RejudgedFrom != 0 {
		return w.judgeAgain(ctx, t, res, done)
	}
	if kept, ok := keptAnswer(done); ok {
		// The agent answered before the run was cut short: judge that answer.
		*res = *kept
		res.ID, res.RunID, res.SampleRow, res.Condition, res.Repetition = 0, ex.run.ID, t.sample.ID, t.condition.Name, t.repetition
		return res, w.judged(ctx, t, res, done)
	}
	ans, agentModel, err := ex.askAgent(ctx, t)
	if ctx.Err() != nil {
		return nil, nil
	}
	ex.fillAnswer(res, ans, agentModel, err)
	ex.secrets.cleanResult(res) // before anything of it is kept, even for a while
	if err == nil {
		if ex.eval.asksJudges() {
			ex.keep(t, partAnswer, *res) // the judges may take long: a kill now must not cost the answer
		}
		return res, w.judged(ctx, t, res, nil)
	}
	return res, nil
}

// judgeAgain takes the task's answer from the run judged again, calling
// no agent, and returns it with its judging.
func (w *workers) judgeAgain(ctx context.Context, t task, res *store.Result, done map[string][]byte) (*store.Result, func() *store.Result) {
	ans, err := w.ex.sourceAnswer(ctx, t)
	if err != nil {
		res.Error, res.ErrorKind = "reading the answer to judge again: "+err.Error(), store.ErrorOther
		return res, nil
	}
	if ans.Error != "" {
		return ans, nil
	}
	return ans, w.judged(ctx, t, ans, done)
}

// askAgent asks the task's agent. Each attempt has the agent's timeout
// (see agent.Guarded); the task as a whole has room for every attempt its
// condition's guards allow. An answer from a batch has the batch's time.
func (ex *execution) askAgent(ctx context.Context, t task) (*agent.Answer, string, error) {
	task := agent.Task{Condition: *t.condition, Prompt: Prompt(ex.spec.Prompts, ex.dataset.Kind, t.sample)}
	actx, cancel := ctx, context.CancelFunc(func() {})
	if task.Batched = ex.agentBatched(t.condition); task.Batched {
		actx = llm.InBatch(ctx, ex.batch, batchLineID(t, partAnswer))
	} else {
		actx, cancel = context.WithTimeout(ctx, ex.taskDeadline(t.condition))
	}
	defer cancel()
	ag, agentModel := ex.agentFor(t.condition)
	ans, err := ag.Answer(actx, task)
	return ans, agentModel, err
}

// fillAnswer puts the agent's answer, its usage and cost, or its error on
// the result.
func (ex *execution) fillAnswer(res *store.Result, ans *agent.Answer, agentModel string, err error) {
	if ans != nil {
		res.TokensIn = ans.TokensIn
		res.TokensOut = ans.TokensOut
		res.LatencyMS = ans.Latency.Milliseconds()
		res.Attempts = ans.Attempts
		res.Turns = ans.Turns
		res.Retries = ans.Retries
		res.ToolCalls = ans.ToolCalls
		res.CacheReadTokens = ans.CacheReadTokens
		res.CacheWriteTokens = ans.CacheWriteTokens
		res.Model = firstNonEmpty(ans.Model, agentModel)
		res.CostUSD, res.CostSource = ex.costOf(res.Model, ans)
		if res.BatchedCalls = ans.BatchedCalls; res.BatchedCalls > 0 && res.CostSource == store.CostFromPrices {
			res.CostUSD -= ex.prices.batchSaving(res.Model, ans.BatchedTokensIn, ans.BatchedTokensOut)
		}
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			res.Response = ans.Content // what a guard or turn limit turned down, kept for review
		}
	}
	if err != nil {
		res.Error = err.Error()
		res.ErrorKind = errorKind(err)
	} else {
		res.Response = ans.Content
	}
}

// whole does a task whole: its answer, then its judgement.
func (w *workers) whole(ctx context.Context, t task) *store.Result {
	res, judge := w.do(ctx, t)
	if judge != nil {
		res = judge()
	}
	return res
}

// judged is the step that judges an answer: the result with its
// judgements, or nil when ctx ended first.
func (w *workers) judged(ctx context.Context, t task, res *store.Result, done map[string][]byte) func() *store.Result {
	return func() *store.Result {
		res.Judgements = w.judge(ctx, t, res, done)
		if ctx.Err() != nil {
			return nil
		}
		return res
	}
}

// judge scores an answer: the judges, each call kept as it returns unless
// done already holds it, then the assertions.
func (w *workers) judge(ctx context.Context, t task, res *store.Result, done map[string][]byte) []store.Judgement {
	ex := w.ex
	js := ex.eval.evaluate(ctx, t, res.Response, done, func(part string, j store.Judgement) {
		ex.secrets.cleanJudgement(&j) // no key is ever kept, even for a while
		ex.keep(t, part, j)
	})
	return append(js, assert.Judgements(ex.spec.Assertions,
		assert.Answer{Text: res.Response, LatencyMS: res.LatencyMS, CostUSD: res.CostUSD})...)
}

// agentBatched reports whether the agent's calls under a condition go in
// batches: batch.agent, and a condition without MCP servers, whose answer
// is one call.
func (ex *execution) agentBatched(c *assay.Condition) bool {
	return ex.batch != nil && ex.spec.Batch.Agent && len(c.MCPServers) == 0
}

// taskSlack is the room a task has past its attempts' deadlines: for
// writing files, starting processes, and the attempts' own slack.
const taskSlack = 10 * time.Second

// taskDeadline bounds one task: every attempt its condition's guards allow,
// each within the agent's timeout.
func (ex *execution) taskDeadline(c *assay.Condition) time.Duration {
	attempts := 1
	if c.RequireMCPToolUse || c.RequireMCPToolSuccess {
		attempts = max(ex.spec.Execution.Retry.MaxAttempts, 1)
	}
	return ex.timeout*time.Duration(attempts) + taskSlack
}

// costOf is what an answer cost and where the figure comes from: the price
// table when it has the model; else what the agent itself reported; else
// nothing, and the report says the model had no price.
func (ex *execution) costOf(model string, ans *agent.Answer) (float64, store.CostSource) {
	if cost, ok := ex.prices.cost(model, ans.TokensIn, ans.TokensOut, ans.CacheReadTokens, ans.CacheWriteTokens); ok {
		return cost, store.CostFromPrices
	}
	if ans.ReportedCostUSD != nil {
		return *ans.ReportedCostUSD, store.CostFromAgent
	}
	return 0, store.CostUnknown
}

func (w *workers) save(ctx context.Context, res *store.Result) {
	w.ex.secrets.cleanResult(res)
	saved, err := w.ex.saveResult(ctx, res)
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		if w.saveErr == nil {
			w.saveErr = fmt.Errorf("save result: %w", err)
		}
		return
	}
	if !saved {
		return
	}
	cost := res.CostUSD
	for _, j := range res.Judgements {
		cost += j.CostUSD
	}
	w.cost += cost
	w.tasks++
	w.spentOn += cost
}

// job is a task handed to a worker, with the cost reserved for it.
type job struct {
	t        task
	reserved float64
}

// partAnswer is the pending part that holds the agent's answer.
const partAnswer = "answer"

// keep writes one part of a task's unfinished work; a run that is cut short
// goes on from it. The task goes on without waiting for the write (the
// store drops it if the task's result comes first); the run waits for
// every write before it ends (loop). Failing to keep a part costs only a
// repeated call. v is encoded later, if the part is written at all: it is
// a value the task does not change after (a copy of its result so far).
func (ex *execution) keep(t task, part string, v any) {
	ex.keeping.Add(1)
	body := func() ([]byte, error) { return json.Marshal(v) }
	ex.m.db.KeepPending(ex.run.ID, t.key(), part, body, func(err error) {
		if err != nil {
			ex.m.log.Warn("pending work not kept", "run_id", ex.run.ID, "part", part, "err", err)
		}
		ex.keeping.Done()
	})
}

// keptForRejudging is the pending work that makes a result's task judge its
// answer again: the answer, and each judge call that did not fail.
func keptForRejudging(r store.Result) map[string][]byte {
	answer := r
	answer.ID, answer.Judgements = 0, nil
	body, err := json.Marshal(answer)
	if err != nil {
		return nil // the task is done again whole
	}
	parts := map[string][]byte{partAnswer: body}
	for _, j := range r.Judgements {
		if j.Error != "" || j.Seed == nil { // a deterministic evaluator is scored again anyway
			continue
		}
		if b, err := json.Marshal(j); err == nil {
			parts[judgePart(j.Evaluator, j.JudgeIndex, j.JudgeRepetition)] = b
		}
	}
	return parts
}

// keptAnswer is the agent's answer kept for a task, if there is one.
func keptAnswer(done map[string][]byte) (*store.Result, bool) {
	body, ok := done[partAnswer]
	if !ok {
		return nil, false
	}
	var r store.Result
	if json.Unmarshal(body, &r) != nil {
		return nil, false
	}
	return &r, true
}
