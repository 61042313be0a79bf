package runner

import (
	"context"
	"errors"
	"sync"
	"time"

	"assay/store"
)

// A run is executed by one process at a time. The process holds the run's
// lease, renews it every third of its time to live while it works and gives it up when
// the run stops; another process leaves a leased run alone until the lease
// expires, or at once when its holder on this host is gone (killed).
const defaultLeaseTTL = 30 * time.Second

// heartbeat renews the run's lease until stopped. It cancels the run when
// the lease is lost to another process, and marks it cancelled by a user
// when another process recorded a cancellation. stop waits for it to end.
func (m *Manager) heartbeat(ctx context.Context, id int64, h *handle, cancel context.CancelFunc) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(m.opts.LeaseTTL / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			status, err := m.db.RenewLease(ctx, id, m.holder, m.opts.LeaseTTL)
			switch {
			case errors.Is(err, store.ErrLeaseLost):
				m.log.Warn("run taken over by another process; stopping here", "run_id", id)
				h.lost.Store(true)
				cancel()
				return
			case err != nil:
				m.log.Error("renew run lease", "run_id", id, "err", err)
			case status == store.RunCancelled:
				m.log.Info("run cancelled by another process", "run_id", id)
				h.cancelled.Store(true)
				cancel()
				return
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// heldElsewhere reports whether another live process holds the run's lease.
func (m *Manager) heldElsewhere(ctx context.Context, id int64) bool {
	l, err := m.db.RunLease(ctx, id)
	return err == nil && l.Holder.ID != m.holder.ID && store.HolderAlive(l.Holder)
}
