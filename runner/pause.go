package runner

import (
	"context"
	"time"

	"assay/store"
)

// Waits between tries to save a result into a database that cannot be
// written (a full disk): they double up to the longest.
const (
	firstSaveRetry = time.Second
	lastSaveRetry  = 10 * time.Second
)

// Paused says why a run executing here is paused, waiting to save its
// results into a database that cannot be written; "" when it is not.
func (m *Manager) Paused(id int64) string {
	m.mu.Lock()
	h, ok := m.active[id]
	m.mu.Unlock()
	if !ok {
		return ""
	}
	if p := h.paused.Load(); p != nil {
		return *p
	}
	return ""
}

// saveResult stores a result, and while the database cannot be written
// (the disk is full, the file read-only) pauses the run — no task starts —
// and tries again, until it can or the run is stopped. Nothing committed
// before is touched; a result not yet saved when the run stops is done
// again when it resumes.
func (ex *execution) saveResult(ctx context.Context, res *store.Result) (saved bool, err error) {
	err = ex.whileUnwritable(ctx, func(ctx context.Context) (err error) {
		saved, err = ex.m.db.SaveResult(ctx, res)
		return err
	})
	return saved, err
}

// whileUnwritable runs write, uncancelled, until it succeeds or fails
// otherwise than on a database that cannot be written; meanwhile the run
// is paused and write tried again, the waits doubling. It returns nil,
// the write not done, when ctx ends first.
func (ex *execution) whileUnwritable(ctx context.Context, write func(context.Context) error) error {
	wait := firstSaveRetry
	for {
		err := write(context.WithoutCancel(ctx))
		if err == nil || !store.Unwritable(err) {
			ex.resume()
			return err
		}
		ex.pause(err, wait)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		wait = min(wait*2, lastSaveRetry)
	}
}

// pause records, and logs once, that the run waits for the database.
func (ex *execution) pause(err error, wait time.Duration) {
	msg := "Paused: the database cannot be written (" + err.Error() + "). Nothing already saved is lost; " +
		"the run tries again every few seconds and goes on by itself once there is room."
	if ex.h.paused.Swap(&msg) == nil {
		ex.m.log.Error("run paused: the database cannot be written", "run_id", ex.run.ID, "err", err, "retry_in", wait)
	}
}

// resume clears a pause, and logs that it is over.
func (ex *execution) resume() {
	if ex.h.paused.Swap(nil) != nil {
		ex.m.log.Info("run resumed: the database can be written again", "run_id", ex.run.ID)
	}
}

// waitWhilePaused holds back the next task while the run is paused; false
// when ctx ends first.
func (ex *execution) waitWhilePaused(ctx context.Context) bool {
	for ex.h.paused.Load() != nil {
		t := time.NewTimer(firstSaveRetry / 4)
		select {
		case <-ctx.Done():
			t.Stop()
			return false
		case <-t.C:
		}
	}
	return true
}
