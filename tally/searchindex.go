package tally

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"sync"

	"assay/store"
)

// The response index (migration 0023) catches up with the results in the
// background: a search that meets more than catchUpAt results past it
// starts the catch-up, which indexes indexBatch results per transaction
// through the committer, so that a running run's writes wait for one batch
// at most, and starts each batch when no search, report or samples table
// is being computed. A search is right whatever the catch-up has done: it
// scans the results the index lacks.

var indexBatch = 2000 // a variable for tests

// indexBatchWrites, set by tests, is called in each batch before it
// writes: a read started there is one that meets a batch under way.
var indexBatchWrites func()

var catchUpAt = 2000 // a variable for tests

// searchIndexer runs one catch-up at a time, and stops it at Close; the
// deletion of runs a stopped process left deleting runs under it too.
type searchIndexer struct {
	mu      sync.Mutex
	running bool
	stopped bool
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	// The reads a person waits for under way (searches, reports and
	// samples tables computed), and a channel closed when there are none:
	// the catch-up waits for none before each batch. On two cores it took
	// one from each search for the 9 s it indexed 150,000 results, making
	// them twice as slow.
	waited int
	idle   chan struct{}
	// stopBatch interrupts the batch under way, if any: a read waited for
	// that starts meanwhile has both cores, and the batch is done again
	// once none is under way.
	stopBatch   context.CancelFunc
	interrupted int // batches ended so, to be done again
}

func newSearchIndexer() *searchIndexer {
	ctx, cancel := context.WithCancel(context.Background())
	idle := make(chan struct{})
	close(idle)
	return &searchIndexer{ctx: ctx, cancel: cancel, idle: idle}
}

// waitedFor marks a read a person waits for as under way until the
// function it returns is called.
func (s *searchIndexer) waitedFor() func() {
	s.mu.Lock()
	if s.waited == 0 {
		s.idle = make(chan struct{})
	}
	s.waited++
	if s.stopBatch != nil {
		s.stopBatch()
		s.stopBatch = nil
	}
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		if s.waited--; s.waited == 0 {
			close(s.idle)
		}
		s.mu.Unlock()
	}
}

// startBatch returns, when no read a person waits for is under way, the
// context of a batch, which the next such read ends if interruptible, and
// its own end.
func (s *searchIndexer) startBatch(ctx context.Context, interruptible bool) (context.Context, context.CancelFunc, error) {
	for {
		s.mu.Lock()
		idle := s.idle
		if s.waited == 0 {
			batch, stop := context.WithCancel(ctx)
			if interruptible {
				s.stopBatch = stop
			}
			s.mu.Unlock()
			return batch, func() {
				s.mu.Lock()
				s.stopBatch = nil
				s.mu.Unlock()
				stop()
			}, nil
		}
		s.mu.Unlock()
		select {
		case <-idle:
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	}
}

// startIndexing runs the catch-up in the background unless one runs or the
// database is closing.
func (t *Tally) startIndexing() {
	if t.db.Postgres() {
		return
	}
	s := t.index
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running || s.stopped {
		return
	}
	s.running = true
	s.wg.Go(func() {
		_, err := t.IndexResponses(s.ctx)
		if err != nil && s.ctx.Err() == nil {
			// The next search that meets the results the index lacks tries again.
			slog.Warn("response index: " + err.Error())
		}
		s.mu.Lock()
		s.running = false
		s.mu.Unlock()
	})
}

// CatchUpIndex starts the response index's catch-up in the background
// when more than catchUpAt results are past it. assay serve calls it as it
// starts and when its last run ends, so that a person's searches find the
// index whole, where the first search of a run the index has not reached
// started it and the searches after met it under way (at 150,000 results,
// seconds of one core, and searches twice as slow meanwhile).
func (t *Tally) CatchUpIndex(ctx context.Context) error {
	if t.db.Postgres() {
		return nil
	}
	var through int64
	if err := t.db.Read().QueryRowContext(ctx, `SELECT indexed_through FROM response_search_state`).Scan(&through); err != nil {
		return fmt.Errorf("response index: %w", err)
	}
	if err := t.catchUpPast(ctx, through); err != nil {
		return fmt.Errorf("response index: %w", err)
	}
	return nil
}

// catchUpPast starts the catch-up when more than catchUpAt results are
// past through, the index's end.
func (t *Tally) catchUpPast(ctx context.Context, through int64) error {
	if t.db.Postgres() {
		return nil
	}
	var lacking int
	if err := t.db.Read().QueryRowContext(ctx, qNotIndexed, through, catchUpAt+1).Scan(&lacking); err != nil {
		return err
	}
	if lacking > catchUpAt {
		t.startIndexing()
	}
	return nil
}

// stopIndexing stops the catch-up and waits for it.
func (t *Tally) stopIndexing() {
	s := t.index
	s.mu.Lock()
	s.stopped = true
	s.mu.Unlock()
	s.cancel()
	s.wg.Wait()
}

// IndexResponses brings the response index up to date with every result
// stored, a batch per transaction, and returns how many results it read.
func (t *Tally) IndexResponses(ctx context.Context) (int, error) {
	if t.db.Postgres() {
		return 0, nil // Postgres keeps no response index of assay's
	}
	total := 0
	// A batch interrupted is done again uninterrupted: reads one after
	// the other cost at most a batch each, and the catch-up goes on.
	interruptible := true
	for {
		batch, done, err := t.index.startBatch(ctx, interruptible)
		if err != nil {
			return total, fmt.Errorf("index responses: %w", err)
		}
		n := 0
		err = t.db.CommitAlone(batch, func(ctx context.Context, tx store.Tx) error {
			var through, last int64
			if err := tx.QueryRowContext(ctx, `SELECT indexed_through FROM response_search_state`).Scan(&through); err != nil {
				return err
			}
			err := tx.QueryRowContext(ctx, `SELECT count(*), coalesce(max(id), 0) FROM
				(SELECT id FROM results WHERE id > ? ORDER BY id LIMIT ?)`, through, indexBatch).Scan(&n, &last)
			if err != nil || n == 0 {
				return err
			}
			if indexBatchWrites != nil {
				indexBatchWrites()
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO response_search (rowid, response)
				SELECT id, response FROM results WHERE id > ? AND id <= ? AND response != ''`, through, last); err != nil {
				return err
			}
			_, err = tx.ExecContext(ctx, `UPDATE response_search_state SET indexed_through = ?`, last)
			return err
		})
		interrupted := err != nil && batch.Err() != nil && ctx.Err() == nil // by a read waited for
		done()
		if interrupted {
			t.index.mu.Lock()
			t.index.interrupted++
			t.index.mu.Unlock()
			interruptible = false
			continue // rolled back whole: done again
		}
		interruptible = true
		if err != nil {
			return total, fmt.Errorf("index responses: %w", err)
		}
		if n == 0 {
			return total, nil
		}
		total += n
	}
}

// clearResponseIndex empties the response index, which then catches up
// in the background (about 8 s of 150,000 results), searches scanning
// what it lacks meanwhile. A run's results deleted from it a batch at a
// time left a segment of deletions per batch for FTS5 to merge: deleting
// 150,000 results took 35 s of CPU in batches of 1,000 (16 s in one
// transaction), 12.5 s with the index emptied first.
func clearResponseIndex(ctx context.Context, tx *sql.Tx) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO response_search (response_search) VALUES ('delete-all')`); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `UPDATE response_search_state SET indexed_through = 0`)
	return err
}
