package store

import (
	"cmp"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"syscall"
	"time"

	"assay"
)

// Holder is a process that may execute runs: its own random id, and where
// it runs, for people reading who holds a run.
type Holder struct {
	ID      string
	Host    string
	PID     int
	Program string // "assay serve", "assay run"
}

// ThisProcess names this process, as the holder of the leases it takes.
func ThisProcess(program string) Holder {
	b := make([]byte, 16)
	rand.Read(b)
	host, _ := os.Hostname()
	if program == "" {
		program = "assay"
	}
	return Holder{ID: hex.EncodeToString(b), Host: host, PID: os.Getpid(), Program: program}
}

// HolderAlive reports whether a lease's holder may still be working: a
// process on another host is assumed alive until its lease expires; on
// this host, one whose pid is gone is not.
func HolderAlive(h Holder) bool {
	host, _ := os.Hostname()
	if h.Host != host || h.PID <= 0 {
		return true
	}
	return !errors.Is(syscall.Kill(h.PID, 0), syscall.ESRCH)
}

// Lease is a holder's claim on one run until ExpiresAt.
type Lease struct {
	RunID       int64
	Holder      Holder
	AcquiredAt  time.Time
	HeartbeatAt time.Time
	ExpiresAt   time.Time
}

// Executor is a process executing a run, as GET /api/runs/:id lists it.
type Executor struct {
	Node       string    `json:"node"`       // "assay serve (pid 123 on host)"
	TasksDone  int       `json:"tasks_done"` // the run's tasks it has finished since it took the run
	LeaseUntil time.Time `json:"lease_until"`
}

// Executors lists the processes executing a run now, the holder of its
// lease and those that joined it (JoinRun), in the order they joined;
// none when the run is not executing. A process gone or whose row expired
// is not listed.
func (db *DB) Executors(ctx context.Context, runID int64) ([]Executor, error) {
	now, err := db.sharedNow(ctx, db.read)
	if err != nil {
		return nil, err
	}
	live, err := db.liveExecutors(ctx, db.read, runID, now, HolderAlive)
	if err != nil {
		return nil, err
	}
	rows := slices.SortedFunc(maps.Values(live), func(a, b executorRow) int {
		return cmp.Or(a.joined.Compare(b.joined), cmp.Compare(a.holder.ID, b.holder.ID))
	})
	out := make([]Executor, 0, len(rows))
	for _, e := range rows {
		out = append(out, Executor{Node: fmt.Sprintf("%s (pid %d on %s)", e.holder.Program, e.holder.PID, e.holder.Host),
			TasksDone: e.tasksDone, LeaseUntil: e.expires})
	}
	return out, nil
}

// ErrLeaseLost is returned when renewing a lease that another holder took.
var ErrLeaseLost = errors.New("the run's lease was taken by another process")

// Alive reports whether a holder's process still runs; a lease of a holder
// that is gone is free before it expires.
type Alive func(Holder) bool

// AcquireLease takes run's lease for h for ttl. It succeeds when the run has
// no lease, when h holds it, when it expired, or when alive says its holder
// is gone; otherwise it fails with ECONFLICT naming the holder.
func (db *DB) AcquireLease(ctx context.Context, runID int64, h Holder, ttl time.Duration, alive Alive) error {
	tx, err := db.BeginWrite(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := db.lockLease(ctx, tx, runID); err != nil {
		return err
	}
	now, err := db.sharedNow(ctx, tx)
	if err != nil {
		return err
	}
	if err := acquireLease(ctx, tx, runID, h, now, ttl, alive); err != nil {
		return err
	}
	return tx.Commit()
}

// lockLease makes another server taking or renewing the same run's lease
// in a Postgres database wait for this transaction: each reads the lease
// before it writes, and two that read no lease must not both take it. A
// SQLite write transaction holds the file's lock already.
func (db *DB) lockLease(ctx context.Context, tx *sql.Tx, runID int64) error {
	if !db.pg {
		return nil
	}
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(7349513, ?::int)`, runID%(1<<31)); err != nil {
		return fmt.Errorf("lease of run %d: %w", runID, err)
	}
	return nil
}

func acquireLease(ctx context.Context, tx *sql.Tx, runID int64, h Holder, now time.Time, ttl time.Duration, alive Alive) error {
	held, err := findLease(ctx, tx, runID)
	if err != nil && !errors.Is(err, assay.ErrNotFound) {
		return err
	}
	if held != nil && held.Holder.ID != h.ID && now.Before(held.ExpiresAt) && (alive == nil || alive(held.Holder)) {
		return &assay.Error{Code: assay.ECONFLICT, Message: held.describe(runID, now)}
	}
	stamp := now.Format(timeFormat)
	_, err = tx.ExecContext(ctx, `INSERT INTO run_leases (run_id, holder, host, pid, program, acquired_at, heartbeat_at, expires_at)
		VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6, ?7)
		ON CONFLICT (run_id) DO UPDATE SET holder = excluded.holder, host = excluded.host, pid = excluded.pid,
			program = excluded.program, heartbeat_at = excluded.heartbeat_at, expires_at = excluded.expires_at,
			acquired_at = CASE WHEN run_leases.holder = excluded.holder THEN run_leases.acquired_at ELSE excluded.acquired_at END`,
		runID, h.ID, h.Host, h.PID, h.Program, stamp, now.Add(ttl).Format(timeFormat))
	if err != nil {
		return fmt.Errorf("acquire lease of run %d: %w", runID, err)
	}
	return nil
}

// describe says who holds a run, for the person who was refused.
func (l *Lease) describe(runID int64, now time.Time) string {
	return fmt.Sprintf("run %d is being executed by %s (pid %d on %s), whose lease was renewed %s ago; "+
		"stop it, or wait until its lease expires at %s", runID, l.Holder.Program, l.Holder.PID, l.Holder.Host,
		now.Sub(l.HeartbeatAt).Round(time.Second), l.ExpiresAt.Local().Format("15:04:05"))
}

func findLease(ctx context.Context, tx Querier, runID int64) (*Lease, error) {
	l := &Lease{RunID: runID}
	var acquired, beat, expires string
	err := tx.QueryRowContext(ctx, `SELECT holder, host, pid, program, acquired_at, heartbeat_at, expires_at
		FROM run_leases WHERE run_id = ?`, runID).Scan(&l.Holder.ID, &l.Holder.Host, &l.Holder.PID, &l.Holder.Program,
		&acquired, &beat, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("lease of run %d: %w", runID, assay.ErrNotFound)
	} else if err != nil {
		return nil, fmt.Errorf("lease of run %d: %w", runID, err)
	}
	l.AcquiredAt = parseTime(acquired)
	l.HeartbeatAt = parseTime(beat)
	l.ExpiresAt = parseTime(expires)
	return l, nil
}

// RenewLease extends h's lease of a run by ttl and returns the run's status,
// so that a holder learns of a cancellation made by another process. It
// fails with ErrLeaseLost when another holder has the lease.
func (db *DB) RenewLease(ctx context.Context, runID int64, h Holder, ttl time.Duration) (RunStatus, error) {
	tx, err := db.BeginWrite(ctx)
	if err != nil {
		return "", err
	}
	defer tx.Rollback()
	now, err := db.sharedNow(ctx, tx)
	if err != nil {
		return "", err
	}
	res, err := tx.ExecContext(ctx, `UPDATE run_leases SET heartbeat_at = ?, expires_at = ? WHERE run_id = ? AND holder = ?`,
		now.Format(timeFormat), now.Add(ttl).Format(timeFormat), runID, h.ID)
	if err != nil {
		return "", fmt.Errorf("renew lease of run %d: %w", runID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return "", fmt.Errorf("run %d: %w", runID, ErrLeaseLost)
	}
	var status RunStatus
	if err := tx.QueryRowContext(ctx, `SELECT status FROM runs WHERE id = ?`, runID).Scan(&status); err != nil {
		return "", fmt.Errorf("renew lease of run %d: %w", runID, err)
	}
	return status, tx.Commit()
}

// ReleaseLease gives up h's lease of a run; a lease another holder took is left alone.
func (db *DB) ReleaseLease(ctx context.Context, runID int64, h Holder) error {
	if _, err := db.write.ExecContext(ctx, `DELETE FROM run_leases WHERE run_id = ? AND holder = ?`, runID, h.ID); err != nil {
		return fmt.Errorf("release lease of run %d: %w", runID, err)
	}
	return nil
}

// LastLease returns the run's lease even when it expired: who executed it
// last. ErrNotFound when no process ever held it or its lease was given up.
func (db *DB) LastLease(ctx context.Context, runID int64) (*Lease, error) {
	return findLease(ctx, db.read, runID)
}

// RunLease returns who holds a run's lease now, or ErrNotFound when nobody
// does or the lease expired.
func (db *DB) RunLease(ctx context.Context, runID int64) (*Lease, error) {
	l, err := findLease(ctx, db.read, runID)
	if err != nil {
		return nil, err
	}
	now, err := db.sharedNow(ctx, db.read)
	if err != nil {
		return nil, err
	}
	if !now.Before(l.ExpiresAt) {
		return nil, fmt.Errorf("lease of run %d: %w", runID, assay.ErrNotFound)
	}
	return l, nil
}
