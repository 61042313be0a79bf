package readmodel

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"assay/store"
	"assay/tally"
)

// Model keeps what is derived from the record in memory, for a server's
// pages: the reports and samples tables of the runs read last, their
// searches, the datasets' fields to slice by and the runs' reviews. Its
// background work (tables made ahead, memory given back) runs under its
// life and ends at Close.
type Model struct {
	db           *store.DB
	log          *slog.Logger
	reports      *reportCache
	sampleTables sampleCache
	searches     FIFO[searchKey, *tally.SampleMatches]
	sliceFields  FIFO[FieldsKey, []store.SliceField]
	reviewsKept  reviewCache

	base      context.Context // the model's life: ends at Close
	stop      context.CancelFunc
	work      sync.WaitGroup
	releasing atomic.Bool // memory going back to the system (releaseMemory)
}

// NewModel keeps what is derived from db for its pages.
func NewModel(db *store.DB, log *slog.Logger) *Model {
	m := &Model{db: db, log: log, reports: newReportCache(8, keptResults), sampleTables: sampleCache{budget: keptResults}}
	m.base, m.stop = context.WithCancel(context.Background())
	return m
}

// Context is the model's life: work kept past a request runs under it.
func (m *Model) Context() context.Context { return m.base }

// background runs f under the model's life: Close cancels the context f
// is given and waits for f to return.
func (m *Model) background(f func(ctx context.Context)) {
	m.work.Go(func() { f(m.base) })
}

// Close stops the model's background work and waits for it, or for ctx.
func (m *Model) Close(ctx context.Context) error {
	m.stop()
	done := make(chan struct{})
	go func() { m.work.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("close: background work still running: %w", ctx.Err())
	}
}
