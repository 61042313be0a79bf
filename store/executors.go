package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"assay"
)

// A run is executed by the processes that join it: the holder of its
// lease, which starts and ends it, and any other server with nothing of
// its own to do. Each has a row in run_executors, renewed while it works,
// and claims the samples whose tasks it does (migration 0046). A claim is
// a whole sample — every condition and repetition of it — so that the
// per-sample tallies of a run are written by one process at a time.

// JoinRun records h as executing the run until ttl from now, by the
// database's clock; a holder joining again keeps its count.
func (db *DB) JoinRun(ctx context.Context, runID int64, h Holder, ttl time.Duration) error {
	now, err := db.sharedNow(ctx, db.read)
	if err != nil {
		return err
	}
	stamp := now.Format(timeFormat)
	_, err = db.aside().ExecContext(ctx, `INSERT INTO run_executors (run_id, holder, host, pid, program, joined_at, beat_at, expires_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (run_id, holder) DO UPDATE SET expires_at = excluded.expires_at`,
		runID, h.ID, h.Host, h.PID, h.Program, stamp, stamp, now.Add(ttl).Format(timeFormat))
	if err != nil {
		return fmt.Errorf("join run %d: %w", runID, err)
	}
	return nil
}

// Beat is what an executor of a run learns as it renews its row.
type Beat struct {
	Status    RunStatus
	Executors int // live, h included
	Place     int // h's among them, by holder id
	Others    int // the tasks the others had in flight at their last beat
	// Stale: another executor has not renewed its row since h joined; it
	// may not know of h yet, and start tasks within a larger share.
	Stale bool
}

// BeatRun reads what h's share of the run is — the run's status, how
// many processes execute it now and where h is among them, what the
// others have in flight — gives it to flying, which sets h's share and
// returns the tasks h has in flight within it, and then renews h's row
// of the run for ttl with those and the tasks it has finished. Written
// after the share is set, what h has in flight is at least what it will
// have until its next beat, as long as that is above its share. A row
// that expired, or that another process removed, is made again.
func (db *DB) BeatRun(ctx context.Context, runID int64, h Holder, ttl time.Duration, tasksDone int, flying func(Beat) int, alive Alive) (Beat, error) {
	var b Beat
	now, err := db.sharedNow(ctx, db.read)
	if err != nil {
		return b, err
	}
	if err := db.read.QueryRowContext(ctx, `SELECT status FROM runs WHERE id = ?`, runID).Scan(&b.Status); errors.Is(err, sql.ErrNoRows) {
		return b, fmt.Errorf("run %d: %w", runID, assay.ErrNotFound)
	} else if err != nil {
		return b, fmt.Errorf("renew run %d's executor: %w", runID, err)
	}
	live, err := db.liveExecutors(ctx, db.read, runID, now, alive)
	if err != nil {
		return b, err
	}
	joined := now
	if me, ok := live[h.ID]; ok {
		joined = me.joined
	}
	b.Executors = 1
	for id, e := range live {
		if id == h.ID {
			continue
		}
		b.Executors++
		if id < h.ID {
			b.Place++
		}
		b.Others += e.flying
		if e.beat.Before(joined) {
			b.Stale = true
		}
	}
	stamp := now.Format(timeFormat)
	_, err = db.aside().ExecContext(ctx, `INSERT INTO run_executors (run_id, holder, host, pid, program, joined_at, beat_at, expires_at, tasks_done, flying)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (run_id, holder) DO UPDATE SET beat_at = excluded.beat_at,
		expires_at = excluded.expires_at, tasks_done = excluded.tasks_done, flying = excluded.flying`,
		runID, h.ID, h.Host, h.PID, h.Program, stamp, stamp, now.Add(ttl).Format(timeFormat), tasksDone, flying(b))
	if err != nil {
		return b, fmt.Errorf("renew run %d's executor: %w", runID, err)
	}
	return b, nil
}

// LeaveRun removes h's row of the run and gives up its claims.
func (db *DB) LeaveRun(ctx context.Context, runID int64, h Holder) error {
	for _, q := range []string{`DELETE FROM run_claims WHERE run_id = ? AND holder = ?`, `DELETE FROM run_executors WHERE run_id = ? AND holder = ?`} {
		if _, err := db.aside().ExecContext(ctx, q, runID, h.ID); err != nil {
			return fmt.Errorf("leave run %d: %w", runID, err)
		}
	}
	return nil
}

// EndRunExecution removes every executor and claim of a run: it ended.
func (db *DB) EndRunExecution(ctx context.Context, runID int64) error {
	for _, q := range []string{`DELETE FROM run_claims WHERE run_id = ?`, `DELETE FROM run_executors WHERE run_id = ?`} {
		if _, err := db.aside().ExecContext(ctx, q, runID); err != nil {
			return fmt.Errorf("end run %d's execution: %w", runID, err)
		}
	}
	return nil
}

// executorRow is what a live executor's row says.
type executorRow struct {
	holder                Holder
	tasksDone             int
	flying                int       // tasks in flight at its last beat
	joined, beat, expires time.Time // when it joined, last renewed its row, and when the row expires
}

// liveExecutors are the rows of a run's executors that have not expired
// and whose process alive does not say is gone, by holder.
func (db *DB) liveExecutors(ctx context.Context, q Querier, runID int64, now time.Time, alive Alive) (map[string]executorRow, error) {
	live := map[string]executorRow{}
	err := EachRow(ctx, q, `SELECT holder, host, pid, program, joined_at, beat_at, expires_at, tasks_done, flying
		FROM run_executors WHERE run_id = ?`, []any{runID}, func(rows *sql.Rows) error {
		var e executorRow
		var joined, beat, expires string
		if err := rows.Scan(&e.holder.ID, &e.holder.Host, &e.holder.PID, &e.holder.Program, &joined, &beat, &expires,
			&e.tasksDone, &e.flying); err != nil {
			return err
		}
		e.joined, e.beat, e.expires = parseTime(joined), parseTime(beat), parseTime(expires)
		if now.Before(e.expires) && (alive == nil || alive(e.holder)) {
			live[e.holder.ID] = e
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("executors of run %d: %w", runID, err)
	}
	return live, nil
}

// Claimed is what a claim of samples found.
type Claimed struct {
	Got  []int64   // the samples claimed, in the order asked
	Held []int64   // those asked that another live executor holds
	Done []TaskKey // tasks of those claimed that have a result already
}

// ClaimSamples claims for h up to want of the candidates (row ids, in the
// order h would do them) that no other live executor of the run holds,
// the first ones first, and says which of the candidates others hold and
// which tasks of those it claimed have a result already: a process that
// held one and left may have done them since h planned. Candidates after
// the want-th claimed are neither claimed nor looked at. h must have
// joined. Claims are taken one run at a time: on Postgres under a lock of
// the run's, on SQLite under the file's write lock.
func (db *DB) ClaimSamples(ctx context.Context, runID int64, h Holder, candidates []int64, want int, alive Alive) (Claimed, error) {
	var c Claimed
	if len(candidates) == 0 || want <= 0 {
		return c, nil
	}
	tx, err := db.aside().BeginTx(ctx, nil)
	if err != nil {
		return c, fmt.Errorf("claim samples of run %d: %w", runID, err)
	}
	defer tx.Rollback()
	if err := db.lockClaims(ctx, tx, runID); err != nil {
		return c, fmt.Errorf("claim samples of run %d: %w", runID, err)
	}
	now, err := db.sharedNow(ctx, tx)
	if err != nil {
		return c, err
	}
	live, err := db.liveExecutors(ctx, tx, runID, now, alive)
	if err != nil {
		return c, err
	}
	held, err := claimHolders(ctx, tx, runID, candidates)
	if err != nil {
		return c, fmt.Errorf("claim samples of run %d: %w", runID, err)
	}
	c.pick(candidates, want, func(s int64) bool {
		holder, ok := held[s]
		return ok && holder != h.ID && isLive(live, holder)
	})
	if len(c.Got) == 0 {
		return c, tx.Commit()
	}
	if err := recordClaims(ctx, tx, runID, h.ID, c.Got); err != nil {
		return c, fmt.Errorf("claim samples of run %d: %w", runID, err)
	}
	if c.Done, err = finishedTasks(ctx, tx, runID, c.Got); err != nil {
		return c, fmt.Errorf("claim samples of run %d: %w", runID, err)
	}
	return c, tx.Commit()
}

// lockClaims keeps other processes from claiming the run's samples until
// the transaction ends; SQLite's one writer does so already.
func (db *DB) lockClaims(ctx context.Context, tx *sql.Tx, runID int64) error {
	if !db.pg {
		return nil
	}
	_, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(7349514, ?::int)`, runID%(1<<31))
	return err
}

// pick takes the candidates another holds as held, and the others as got,
// until it has the number wanted.
func (c *Claimed) pick(candidates []int64, want int, heldByAnother func(int64) bool) {
	for _, s := range candidates {
		if heldByAnother(s) {
			c.Held = append(c.Held, s)
			continue
		}
		if c.Got = append(c.Got, s); len(c.Got) == want {
			return
		}
	}
}

// idArgs is a query's arguments: the leading ones, then each sample id.
func idArgs(ids []int64, lead ...any) []any {
	args := lead
	for _, s := range ids {
		args = append(args, s)
	}
	return args
}

// claimHolders maps each of the samples already claimed to its holder.
func claimHolders(ctx context.Context, tx *sql.Tx, runID int64, samples []int64) (map[int64]string, error) {
	held := map[int64]string{}
	err := EachRow(ctx, tx, `SELECT sample_id, holder FROM run_claims WHERE run_id = ? AND sample_id IN (?`+
		strings.Repeat(", ?", len(samples)-1)+`)`, idArgs(samples, runID), func(rows *sql.Rows) error {
		var s int64
		var holder string
		err := rows.Scan(&s, &holder)
		held[s] = holder
		return err
	})
	return held, err
}

// recordClaims makes the holder the claimant of the samples, taking them
// over from a holder no longer alive.
func recordClaims(ctx context.Context, tx *sql.Tx, runID int64, holder string, samples []int64) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO run_claims (run_id, sample_id, holder) VALUES (?1, ?3, ?2)`+
		strings.Repeat(", (?1, ?, ?2)", len(samples)-1)+`
		ON CONFLICT (run_id, sample_id) DO UPDATE SET holder = excluded.holder`, idArgs(samples, runID, holder)...)
	return err
}

// finishedTasks lists the tasks of the samples that already have a result.
func finishedTasks(ctx context.Context, tx *sql.Tx, runID int64, samples []int64) ([]TaskKey, error) {
	var done []TaskKey
	err := EachRow(ctx, tx, `SELECT sample_id, condition, repetition FROM results WHERE run_id = ? AND sample_id IN (?`+
		strings.Repeat(", ?", len(samples)-1)+`)`, idArgs(samples, runID), func(rows *sql.Rows) error {
		var k TaskKey
		err := rows.Scan(&k.SampleRow, &k.Condition, &k.Repetition)
		done = append(done, k)
		return err
	})
	return done, err
}

// UnclaimedWork says whether a sample of the run has tasks without a
// result (perSample tasks each: conditions × repetitions) and no live
// executor's claim: whether a process joining would find anything to do.
func (db *DB) UnclaimedWork(ctx context.Context, runID int64, perSample int, alive Alive) (bool, error) {
	now, err := db.sharedNow(ctx, db.read)
	if err != nil {
		return false, err
	}
	live, err := db.liveExecutors(ctx, db.read, runID, now, alive)
	if err != nil {
		return false, err
	}
	args := []any{runID, runID, perSample}
	notLive := ""
	if len(live) > 0 {
		notLive = ` AND c.holder IN (?` + strings.Repeat(", ?", len(live)-1) + `)`
		for id := range live {
			args = append(args, id)
		}
	}
	var found int
	err = db.read.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT s.id FROM samples s
		WHERE s.dataset_id = (SELECT dataset_id FROM runs WHERE id = ?1)
		AND (SELECT count(*) FROM results r WHERE r.run_id = ?2 AND r.sample_id = s.id) < ?3
		AND NOT EXISTS (SELECT 1 FROM run_claims c WHERE c.run_id = ?2 AND c.sample_id = s.id`+notLive+`) LIMIT 1) AS w`,
		args...).Scan(&found)
	if err != nil {
		return false, fmt.Errorf("unclaimed work of run %d: %w", runID, err)
	}
	return found > 0, nil
}

func isLive(live map[string]executorRow, holder string) bool {
	_, ok := live[holder]
	return ok
}
