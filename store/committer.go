package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Results and pending work are written by a committer: the writes that
// arrive while a transaction commits are committed together in the next,
// so that one that fails leaves the others stored (commitBatch). A caller
// returns once its write is committed, or failed: a task is counted done
// only when its result is durable, but concurrent tasks share the cost of
// a commit, which is much the same for one result as for fifty (a page
// written per B-tree touched, whatever the count of rows). The figures
// behind the constants below are in docs/performance.md.

// maxBatch bounds the writes of one transaction: a task's result and the
// parts of it kept for resuming, most of which are dropped before they
// are written when calls return at once.
const maxBatch = 256

// queued is how many writes may wait for the committer before a caller
// sending one waits too. A worker keeping its agent's answer for resuming
// is not to wait, and a run's writes are bounded anyway: each worker has
// at most savesAhead results awaiting their commit, and a task's kept
// parts are dropped once its result is.
const queued = 1024

// gatherFor is how long a batch that found other writes queued waits for
// more before it commits, so that writes arriving together (a run's
// workers) share a commit; a lone write commits at once. A worker does
// not wait for its result's commit (runner's saveBehind), so the wait
// delays only the count of finished tasks. Writers that each wait for
// their commit would wait the whole of it for nothing, so the wait also
// ends when no write has come for gatherIdle.
const (
	gatherFor  = 20 * time.Millisecond
	gatherIdle = 2 * time.Millisecond
)

// write is one caller's work in a batch.
type write struct {
	ctx  context.Context
	do   func(ctx context.Context, tx Tx) error
	done chan error // told how the write went; nil for a kept part
	kept *keptPart  // a part of a task's unfinished work (pending.go)
	// alone: committed in a transaction of its own, which a cancelled
	// ctx may interrupt (SQLite then rolls the whole transaction back).
	alone bool
}

// committer runs batches of writes on the write connection.
type committer struct {
	mu     sync.RWMutex // held to send, and to close
	closed bool
	queue  chan *write
	exited chan struct{}
}

// errClosed is the error of a write after Close.
var errClosed = errors.New("the database is closed")

func (db *DB) startCommitter() {
	db.commits = &committer{queue: make(chan *write, queued), exited: make(chan struct{})}
	go db.commitLoop()
}

// Commit runs do in a transaction shared with the writes arriving at the
// same time, and returns once that transaction is committed.
func (db *DB) Commit(ctx context.Context, do func(ctx context.Context, tx Tx) error) error {
	w := &write{ctx: ctx, do: do, done: make(chan error, 1)}
	if err := db.enqueue(w); err != nil {
		return err
	}
	return <-w.done
}

// CommitAlone runs do in a transaction of its own, which ctx's end
// interrupts, and returns once it is committed or rolled back.
func (db *DB) CommitAlone(ctx context.Context, do func(ctx context.Context, tx Tx) error) error {
	w := &write{ctx: ctx, do: do, done: make(chan error, 1), alone: true}
	if err := db.enqueue(w); err != nil {
		return err
	}
	return <-w.done
}

// enqueue hands w to the committer.
func (db *DB) enqueue(w *write) error {
	c := db.commits
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.closed {
		return errClosed
	}
	c.queue <- w
	return nil
}

// stopCommitter commits what is queued and stops.
func (db *DB) stopCommitter() {
	c := db.commits
	if c == nil {
		return
	}
	c.mu.Lock()
	if !c.closed {
		c.closed = true
		close(c.queue)
	}
	c.mu.Unlock()
	<-c.exited
}

func (db *DB) commitLoop() {
	c := db.commits
	defer close(c.exited)
	for first := range c.queue {
		batch := []*write{first}
	more:
		for len(batch) < maxBatch {
			select {
			case w, ok := <-c.queue:
				if !ok {
					break more
				}
				batch = append(batch, w)
			default:
				break more
			}
		}
		if len(batch) > 1 {
			batch = c.gather(batch)
		}
		db.commitBatch(batch)
	}
}

// gather adds to batch the writes that arrive within gatherFor, up to
// maxBatch, until none has come for gatherIdle.
func (c *committer) gather(batch []*write) []*write {
	end := time.NewTimer(gatherFor)
	defer end.Stop()
	idle := time.NewTimer(gatherIdle)
	defer idle.Stop()
	for len(batch) < maxBatch {
		select {
		case w, ok := <-c.queue:
			if !ok {
				return batch
			}
			batch = append(batch, w)
			idle.Reset(gatherIdle)
		case <-end.C:
			return batch
		case <-idle.C:
			return batch
		}
	}
	return batch
}

// commitBatch commits the batch's writes and tells each caller how its
// write went. A write fails rarely (a full disk, a cancelled caller, a
// constraint), so the batch is first run whole; only when one of its
// writes fails is the transaction rolled back and the batch run again,
// each write under a savepoint of its own, so that the failing one leaves
// the others stored. Savepoints around every write cost a tenth of the
// store's part of a result: SQLite copies each page a write touches, the
// first time in its savepoint, to be able to undo that write alone.
func (db *DB) commitBatch(batch []*write) {
	if i := slices.IndexFunc(batch, func(w *write) bool { return w.alone }); i >= 0 && len(batch) > 1 {
		rest := slices.Concat(batch[:i], batch[i+1:])
		if len(rest) > 0 {
			db.commitBatch(rest)
		}
		db.commitBatch(batch[i : i+1])
		return
	}
	errs := make([]error, len(batch))
	defer func() {
		for i, w := range batch {
			if w.kept != nil {
				db.keeps.written(w.kept, errs[i])
				continue
			}
			w.done <- errs[i]
		}
	}()
	if db.commitTx(batch, errs, false) {
		return
	}
	clear(errs)
	db.commitTx(batch, errs, true)
}

// take says whether the committer writes one: not a kept part dropped
// because its task's result came first.
func (one *write) take() bool {
	return one.kept == nil || one.kept.state.CompareAndSwap(partQueued, partWriting) ||
		one.kept.state.Load() == partWriting // taken by a first try of its batch
}

// commitTx runs the batch's writes in a transaction, each under a
// savepoint of its own when apart, and commits it. Not apart, it gives up
// at the first failing write of several, nothing written, and returns
// false.
func (db *DB) commitTx(batch []*write, errs []error, apart bool) bool {
	tx, err := db.BeginWrite(context.Background())
	if err != nil {
		fill(errs, err)
		return true
	}
	defer tx.Rollback()
	w := db.writer(tx)
	for i, one := range batch {
		if errs[i] = one.ctx.Err(); errs[i] != nil || !one.take() {
			continue
		}
		if !apart {
			if errs[i] = one.do(one.ctx, w); errs[i] != nil {
				return len(batch) == 1
			}
			w.adds.Kept()
			continue
		}
		if _, err := w.ExecPrepared(one.ctx, qSavepoint); err != nil {
			fill(errs, fmt.Errorf("savepoint: %w", err))
			return true
		}
		if errs[i] = one.do(one.ctx, w); errs[i] != nil {
			w.adds.Dropped()
			if _, err := w.ExecPrepared(context.Background(), qRollbackTo); err != nil {
				// SQLite rolled the whole transaction back on that error (a
				// full disk, say): every write of the batch is undone by it.
				fill(errs, errs[i])
				return true
			}
		}
		if _, err := w.ExecPrepared(context.Background(), qRelease); err != nil {
			fill(errs, fmt.Errorf("release savepoint: %w", err))
			return true
		}
		w.adds.Kept()
	}
	if err := w.commit(context.Background()); err != nil {
		fill(errs, fmt.Errorf("commit: %w", err))
	}
	return true
}

// fill gives err to the writes without an error of their own.
func fill(errs []error, err error) {
	for i := range errs {
		if errs[i] == nil {
			errs[i] = err
		}
	}
}

// The statements that keep one write of a batch apart.
const (
	qSavepoint  = `SAVEPOINT one_write`
	qRollbackTo = `ROLLBACK TO one_write`
	qRelease    = `RELEASE one_write`
)
