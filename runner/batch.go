package runner

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"assay/config"
	"assay/runner/llm"
	"assay/store"
)

// batches sends a run's judge calls (batch.judge), and its agent's under
// conditions without tools (batch.agent), through the Batch API of their
// endpoints: calls are gathered per endpoint into batches
// of up to batch.size lines, each kept in the store the moment the
// provider has made it, and answered as their batch ends. A line the
// batch could not answer (a failed line, an unreadable one, a batch
// cancelled after max_wait) is called live. After a restart the run's
// kept batches are polled again: a call whose line is in one waits for
// it rather than being sent, and paid for, twice.
type batches struct {
	ctx                   context.Context // the execution's: polling stops with it
	db                    *store.DB
	runID                 int64
	log                   *slog.Logger
	size                  int
	maxWait, gather, poll time.Duration
	clients               map[string]*llm.Client // a client of each endpoint, to submit and poll with

	mu     sync.Mutex
	closed bool                   // the execution is over: nothing more is sent (wait)
	queues map[string]*batchQueue // lines waiting to be sent, by endpoint
	lines  map[string]*batchLine  // every line sent or waiting, by id
	sent   []*sentBatch
	wg     sync.WaitGroup // the batches being followed
}

// submitTimeout bounds the upload of a batch's file and the making of it.
const submitTimeout = 30 * time.Second

// batchQueue is an endpoint's lines waiting to be sent.
type batchQueue struct {
	lines []llm.BatchLine
	timer *time.Timer
}

// batchLine is one call's line; done is closed once its batch has
// answered it or given up on it (res.Err, or no Resp: call it live).
type batchLine struct {
	done  chan struct{}
	res   llm.BatchResult
	batch *sentBatch // the batch it went in; nil while it waits
}

// sentBatch is a batch the provider made, as kept.
type sentBatch struct {
	kept      store.RunBatch
	client    *llm.Client
	following bool // a goroutine polls it (follow)
}

// newBatches prepares a run's batches, taking up those it kept (a run
// resumed after its process died): their lines are answered from them.
func newBatches(ctx context.Context, ex *execution, b *config.Batch, clients map[string]*llm.Client) (*batches, error) {
	maxWait, gather, poll := b.Waits()
	bs := &batches{ctx: ctx, db: ex.m.db, runID: ex.run.ID, log: ex.m.log, size: b.Lines(),
		maxWait: maxWait, gather: gather, poll: poll, clients: clients,
		queues: map[string]*batchQueue{}, lines: map[string]*batchLine{}}
	kept, err := ex.m.db.RunBatches(ctx, ex.run.ID)
	if err != nil {
		return nil, err
	}
	for _, k := range kept {
		// A batch of the agent's calls has its client once one of its lines
		// is asked for (Send).
		sb := &sentBatch{kept: k, client: clients[k.Endpoint]}
		bs.sent = append(bs.sent, sb)
		for _, id := range k.Lines {
			bs.lines[id] = &batchLine{done: make(chan struct{}), batch: sb}
		}
	}
	// Followed once every kept line is in place: a batch's poll may answer
	// its lines at once.
	bs.mu.Lock()
	defer bs.mu.Unlock()
	for _, sb := range bs.sent {
		if sb.kept.EndedAt == nil && sb.client != nil {
			bs.follow(sb, 0)
		}
	}
	return bs, nil
}

// Send sends a call as a line of its endpoint's next batch, or waits for
// the line a kept batch holds for it, and returns its answer; a line the
// batch did not answer is called live.
func (bs *batches) Send(ctx context.Context, c *llm.Client, id string, req llm.Request) (*llm.Response, error) {
	bs.mu.Lock()
	l := bs.lines[id]
	if l == nil {
		l = &batchLine{done: make(chan struct{})}
		bs.lines[id] = l
		bs.enqueue(c, llm.BatchLine{ID: id, Req: req, Client: c})
	} else if l.batch != nil && !l.batch.following {
		if l.batch.client == nil {
			l.batch.client = c
		}
		bs.follow(l.batch, 0) // a batch kept from before: poll it, or read it again
	}
	bs.mu.Unlock()
	select {
	case <-l.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	bs.mu.Lock()
	delete(bs.lines, id)
	bs.mu.Unlock()
	if l.res.Resp != nil {
		return l.res.Resp, nil
	}
	if l.res.Err != nil {
		bs.log.Info("a batch line failed: called live", "run_id", bs.runID, "line", id, "err", l.res.Err)
	}
	return c.Chat(llm.Live(ctx), req)
}

// enqueue adds a line to its endpoint's queue, which is sent when full
// or when gather has passed since its first line. Held: bs.mu.
func (bs *batches) enqueue(c *llm.Client, line llm.BatchLine) {
	ep := c.Endpoint()
	if bs.clients[ep] == nil {
		bs.clients[ep] = c
	}
	q := bs.queues[ep]
	if q == nil {
		q = &batchQueue{}
		bs.queues[ep] = q
	}
	q.lines = append(q.lines, line)
	if len(q.lines) >= bs.size {
		bs.submit(ep, q)
		return
	}
	if q.timer == nil {
		q.timer = time.AfterFunc(bs.gather, func() {
			bs.mu.Lock()
			defer bs.mu.Unlock()
			if bs.queues[ep] == q {
				bs.submit(ep, q)
			}
		})
	}
}

// submit sends a queue's lines as a batch, in the background, unless the
// execution is over: its tasks are done again when the run is resumed, and
// a batch sent now would pay for their lines twice. Held: bs.mu.
func (bs *batches) submit(ep string, q *batchQueue) {
	delete(bs.queues, ep)
	if q.timer != nil {
		q.timer.Stop()
	}
	if bs.closed || bs.ctx.Err() != nil {
		return
	}
	client := bs.clients[ep]
	bs.wg.Add(1)
	go func() {
		defer bs.wg.Done()
		// Sent whole even if the run stops meanwhile: a batch the provider
		// made but the store did not keep would be paid for again.
		ctx, stop := context.WithTimeout(context.WithoutCancel(bs.ctx), submitTimeout)
		b, err := client.SubmitBatch(ctx, q.lines, "24h")
		stop()
		if err != nil {
			bs.log.Warn("a batch could not be sent: its lines are called live", "run_id", bs.runID, "lines", len(q.lines), "err", err)
			bs.answer(q.lines, nil, fmt.Errorf("send the batch: %w", err))
			return
		}
		ids := make([]string, len(q.lines))
		for i, l := range q.lines {
			ids[i] = l.ID
		}
		sb := &sentBatch{client: client, kept: store.RunBatch{RunID: bs.runID, Provider: client.Provider(), ProviderID: b.ID,
			Endpoint: ep, Status: b.Status, Lines: ids}}
		if err := bs.db.AddRunBatch(context.WithoutCancel(bs.ctx), &sb.kept); err != nil {
			// It runs all the same; only a restart would not find it.
			bs.log.Warn("a batch was sent but not kept", "run_id", bs.runID, "batch", b.ID, "err", err)
		}
		bs.mu.Lock()
		bs.sent = append(bs.sent, sb)
		for _, id := range ids {
			if l := bs.lines[id]; l != nil {
				l.batch = sb
			}
		}
		bs.follow(sb, min(firstPoll, bs.poll))
		bs.mu.Unlock()
	}()
}

// firstPoll is how soon a batch just sent is first asked how it stands:
// a provider may end a small one in seconds. The waits then double up to
// batch.poll.
const firstPoll = time.Second

// nextPoll is the wait after one of wait: twice as long, from firstPoll up
// to most.
func nextPoll(wait, most time.Duration) time.Duration {
	return min(max(2*wait, firstPoll), most)
}

// follow polls a batch until it ends, then answers its lines; first, the
// first poll's wait, each wait after it twice the last up to batch.poll.
// Past max_wait the batch is cancelled, and what it answered is read as it
// ends. Held: bs.mu.
func (bs *batches) follow(sb *sentBatch, first time.Duration) {
	sb.following = true
	bs.wg.Add(1)
	go func() {
		defer bs.wg.Done()
		wait, cancelled := first, false
		for {
			select {
			case <-bs.ctx.Done():
				return
			case <-time.After(wait):
			}
			wait = nextPoll(wait, bs.poll)
			b, err := sb.client.PollBatch(bs.ctx, sb.kept.ProviderID)
			if err != nil && llm.Refused(err) {
				// Not to be had from this provider and key: its lines are
				// called live rather than waited for for ever.
				bs.log.Warn("a batch is refused by its provider: its lines are called live", "run_id", bs.runID, "batch", sb.kept.ProviderID, "err", err)
				bs.answer(sb.lines(), nil, fmt.Errorf("batch %s: %w", sb.kept.ProviderID, err))
				bs.setStatus(sb, "refused", true)
				return
			}
			if err != nil {
				if bs.ctx.Err() == nil {
					bs.log.Warn("a batch could not be polled", "run_id", bs.runID, "batch", sb.kept.ProviderID, "err", err)
				}
				continue
			}
			bs.setStatus(sb, b.Status, false)
			if !b.Ended() {
				if !cancelled && time.Since(sb.kept.CreatedAt) > bs.maxWait {
					cancelled = true
					if err := sb.client.CancelBatch(bs.ctx, b.ID); err != nil {
						bs.log.Warn("a batch past max_wait could not be cancelled", "run_id", bs.runID, "batch", b.ID, "err", err)
					}
				}
				continue
			}
			b.Lines = sb.kept.Lines
			results, err := sb.client.BatchResults(bs.ctx, b)
			if err != nil {
				if bs.ctx.Err() == nil {
					bs.log.Warn("a batch's answers could not be read", "run_id", bs.runID, "batch", b.ID, "err", err)
				}
				continue
			}
			bs.answer(sb.lines(), results, fmt.Errorf("batch %s ended %s without answering the line", b.ID, b.Status))
			bs.setStatus(sb, b.Status, true)
			return
		}
	}()
}

// lines are a batch's lines, by id.
func (sb *sentBatch) lines() []llm.BatchLine {
	out := make([]llm.BatchLine, len(sb.kept.Lines))
	for i, id := range sb.kept.Lines {
		out[i] = llm.BatchLine{ID: id}
	}
	return out
}

// setStatus keeps a batch's status when it changed.
func (bs *batches) setStatus(sb *sentBatch, status string, ended bool) {
	bs.mu.Lock()
	changed := sb.kept.Status != status || ended && sb.kept.EndedAt == nil
	sb.kept.Status = status
	if ended && sb.kept.EndedAt == nil {
		now := time.Now()
		sb.kept.EndedAt = &now
	}
	bs.mu.Unlock()
	if !changed {
		return
	}
	if err := bs.db.SetRunBatchStatus(context.WithoutCancel(bs.ctx), sb.kept.ID, status, ended); err != nil {
		bs.log.Warn("a batch's status was not kept", "run_id", bs.runID, "batch", sb.kept.ProviderID, "err", err)
	}
}

// answer gives lines their results, matched by id; a line without one
// gets missing.
func (bs *batches) answer(lines []llm.BatchLine, results []llm.BatchResult, missing error) {
	byID := make(map[string]llm.BatchResult, len(results))
	for _, r := range results {
		byID[r.ID] = r
	}
	bs.mu.Lock()
	defer bs.mu.Unlock()
	for _, line := range lines {
		l := bs.lines[line.ID]
		if l == nil || isClosed(l.done) {
			continue // its task was done before, or it was answered
		}
		r, ok := byID[line.ID]
		if !ok {
			r = llm.BatchResult{ID: line.ID, Err: &llm.Error{Message: missing.Error()}}
		}
		l.res = r
		close(l.done)
	}
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// cancel asks the provider to stop the run's batches that have not ended:
// the run was cancelled.
func (bs *batches) cancel() {
	bs.mu.Lock()
	var open []*sentBatch
	for _, sb := range bs.sent {
		if sb.kept.EndedAt == nil && sb.client != nil {
			open = append(open, sb)
		}
	}
	bs.mu.Unlock()
	for _, sb := range open {
		ctx, stop := context.WithTimeout(context.WithoutCancel(bs.ctx), 10*time.Second)
		err := sb.client.CancelBatch(ctx, sb.kept.ProviderID)
		stop()
		if err != nil {
			bs.log.Warn("a cancelled run's batch could not be cancelled", "run_id", bs.runID, "batch", sb.kept.ProviderID, "err", err)
			continue
		}
		bs.setStatus(sb, "cancelling", false)
	}
}

// wait ends the run's batching, once its context is done: lines still
// gathered are not sent, and the batches being sent and followed stop.
func (bs *batches) wait() {
	bs.mu.Lock()
	bs.closed = true
	for ep, q := range bs.queues {
		if q.timer != nil {
			q.timer.Stop()
		}
		delete(bs.queues, ep)
	}
	bs.mu.Unlock()
	bs.wg.Wait()
}
