package store

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
)

// Pending is the work a run has done for tasks whose results are not
// committed: by task, then by part ("answer", or a judge call's key), the
// JSON the runner wrote.
type Pending map[TaskKey]map[string][]byte

// KeepPending keeps one part of a task's unfinished work, replacing what
// was kept under that part. It does not wait: the part is queued for the
// committer, and then is called once the part is written (nil), could not
// be (its error), or was dropped (nil) because the task's result was
// handed to SaveResult before the committer reached the part: that result
// makes it useless, and a run whose answers and judges return at once
// writes each task once instead of once per call. A part lost with its
// result (SaveResult failing) costs only a call made again when the run
// resumes.
//
// body makes the part's JSON, on the committer and only if the part is
// written: most are dropped when calls return at once, and encoding each
// as it was kept cost 3% of the engine's CPU. What it encodes must not
// change after the call.
func (db *DB) KeepPending(runID int64, k TaskKey, part string, body func() ([]byte, error), then func(error)) {
	p := &keptPart{task: runTask{runID, k}, then: then}
	db.keeps.add(p)
	w := &write{ctx: context.Background(), kept: p, do: func(ctx context.Context, tx Tx) error {
		data, err := body()
		if err != nil {
			return fmt.Errorf("encode pending work: %w", err)
		}
		if _, err := tx.ExecPrepared(ctx, qSavePending, runID, k.SampleRow, k.Condition, k.Repetition, part, string(data)); err != nil {
			return fmt.Errorf("save pending work: %w", err)
		}
		return nil
	}}
	if err := db.enqueue(w); err != nil {
		db.keeps.written(p, fmt.Errorf("save pending work: %w", err))
	}
}

// The states of a kept part.
const (
	partQueued  int32 = iota
	partWriting       // taken by the committer: it is written
	partDropped       // its task's result came first: it is not
)

// keptPart is a part queued by KeepPending.
type keptPart struct {
	task  runTask
	state atomic.Int32
	then  func(error)
}

// runTask names a task across runs.
type runTask struct {
	run int64
	TaskKey
}

// keptParts are the parts queued and not yet through the committer, by task.
type keptParts struct {
	mu     sync.Mutex
	queued map[runTask][]*keptPart
}

func (k *keptParts) add(p *keptPart) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.queued == nil {
		k.queued = map[runTask][]*keptPart{}
	}
	k.queued[p.task] = append(k.queued[p.task], p)
}

// drop marks a task's parts not taken by the committer yet as not needed.
func (k *keptParts) drop(t runTask) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, p := range k.queued[t] {
		p.state.CompareAndSwap(partQueued, partDropped)
	}
}

// written forgets p, through the committer with err, and tells its caller.
func (k *keptParts) written(p *keptPart, err error) {
	k.mu.Lock()
	parts := k.queued[p.task]
	for i, q := range parts {
		if q == p {
			parts = append(parts[:i], parts[i+1:]...)
			break
		}
	}
	if len(parts) == 0 {
		delete(k.queued, p.task)
	} else {
		k.queued[p.task] = parts
	}
	k.mu.Unlock()
	p.then(err)
}

// PendingWork reads the unfinished work of a run's tasks.
func (db *DB) PendingWork(ctx context.Context, runID int64) (Pending, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT sample_id, condition, repetition, part, body FROM pending_work WHERE run_id = ?`, runID)
	if err != nil {
		return nil, fmt.Errorf("pending work: %w", err)
	}
	defer rows.Close()
	out := Pending{}
	for rows.Next() {
		var k TaskKey
		var part, body string
		if err := rows.Scan(&k.SampleRow, &k.Condition, &k.Repetition, &part, &body); err != nil {
			return nil, fmt.Errorf("pending work: %w", err)
		}
		if out[k] == nil {
			out[k] = map[string][]byte{}
		}
		out[k][part] = []byte(body)
	}
	return out, rows.Err()
}

const qSavePending = `INSERT INTO pending_work (run_id, sample_id, condition, repetition, part, body)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (run_id, sample_id, condition, repetition, part) DO UPDATE SET body = excluded.body`
