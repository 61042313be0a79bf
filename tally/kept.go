package tally

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"

	"assay/store"
)

// What a report or a samples table folds from a finished run's rows is
// kept in the database once folded (migrations 0033 and 0035), with the
// version of the run's results it was folded from: their count, the last
// one's id and when the run finished. A server that starts, or that forgot
// it, reads it in one row while the run's results still stand so; a run
// resumed, or whose failed tasks are cleared, no longer matches it, and it
// is folded again and kept again once the run finishes. It is kept when
// first made — a finished run's report page makes both — and not by the
// run's end: a fold holds every row, about 350 bytes each for a samples
// table, and `assay run` over 100,000 questions peaked at 96 MiB instead
// of 61 when its end folded them.

// background runs what a DB goes on with after its caller returned, until
// the DB closes: Close waits for it.
type background struct {
	mu     sync.Mutex
	closed bool
	wg     sync.WaitGroup
}

// Go runs f, unless the DB is closing.
func (b *background) Go(f func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.closed {
		b.wg.Go(f)
	}
}

// Wait waits for what runs.
func (b *background) Wait() { b.wg.Wait() }

// close lets nothing more start, and waits for what runs.
func (b *background) close() {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	b.wg.Wait()
}

// keptVersion is the version of a run's results a kept table is of.
type keptVersion struct {
	finished bool // the run is finished: its table may be kept
	count    int
	last     int64
	at       string // when the run finished
}

// keptTables are the tables of what is kept, each a row per run.
var keptTables = []string{"sample_stats_kept", "report_scores_kept"}

// readKept reads, through q, the version of a run's results and, when
// table keeps a blob of that version, hands it to read: the driver's
// bytes, not copied again, valid during the call.
func readKept(ctx context.Context, q store.Querier, table string, runID int64, read func([]byte)) (keptVersion, error) {
	var v keptVersion
	err := store.EachRow(ctx, q, `SELECT r.status, r.results_count, r.results_last, coalesce(r.finished_at, ''), k.stats
		FROM runs r LEFT JOIN `+table+` k ON k.run_id = r.id AND k.results_count = r.results_count
			AND k.results_last = r.results_last AND k.finished_at = r.finished_at
		WHERE r.id = ?`, []any{runID}, func(rows *sql.Rows) error {
		var status store.RunStatus
		var blob sql.RawBytes
		if err := rows.Scan(&status, &v.count, &v.last, &v.at, &blob); err != nil {
			return err
		}
		v.finished = status.Finished() && status != store.RunDeleting && status != store.RunImporting && v.at != ""
		if blob != nil {
			read(blob)
		}
		return nil
	})
	if err != nil {
		return v, fmt.Errorf("%s of run %d: %w", table, runID, err)
	}
	return v, nil
}

// keep keeps blob in table as what the run's results at version v fold
// into, in the background, when the run is finished: it is written only if
// the run's results still stand at v when the write commits.
func (t *Tally) keep(table string, runID int64, v keptVersion, blob func() []byte) {
	if !v.finished {
		return
	}
	b := blob()
	t.keeping.Go(func(context.Context) {
		// Not kept (a full disk, the database closing), it is folded
		// again the next time.
		_ = t.db.Commit(context.Background(), func(ctx context.Context, tx store.Tx) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO `+table+` (run_id, results_count, results_last, finished_at, stats)
	SELECT id, results_count, results_last, finished_at, ?5 FROM runs
	WHERE id = ?1 AND results_count = ?2 AND results_last = ?3 AND finished_at = ?4
	ON CONFLICT (run_id) DO UPDATE SET results_count = excluded.results_count,
		results_last = excluded.results_last, finished_at = excluded.finished_at, stats = excluded.stats`,
				runID, v.count, v.last, v.at, b)
			return err
		})
	})
}

// appendNumber writes a whole number from 0 to 2⁵³ as twice itself, in
// a varint, and any other as 1 and then its float64 bits: sums of scores
// in whole points take a byte or two.
func appendNumber(b []byte, f float64) []byte {
	if f >= 0 && f <= 1<<53 && f == math.Trunc(f) && !math.Signbit(f) {
		return binary.AppendUvarint(b, uint64(f)<<1)
	}
	return binary.LittleEndian.AppendUint64(binary.AppendUvarint(b, 1), math.Float64bits(f))
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// errKept is a kept table that does not read as it was written.
var errKept = errors.New("a kept table that does not read")

// keptReader reads what was kept, remembering its first error.
type keptReader struct {
	b   []byte
	err error
}

// fail stops the reader at errKept.
func (r *keptReader) fail() { r.err, r.b = errKept, nil }

func (r *keptReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

// count reads a count of things each taking at least least bytes more.
func (r *keptReader) count(least int) int {
	v := r.uvarint()
	if v > uint64(len(r.b)/least) {
		r.fail()
		return 0
	}
	return int(v)
}

func (r *keptReader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

// number reads what appendNumber wrote.
func (r *keptReader) number() float64 {
	switch n := r.uvarint(); {
	case n&1 == 0:
		return float64(n >> 1)
	case n != 1 || len(r.b) < 8:
		r.fail()
		return 0
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(r.b))
	r.b = r.b[8:]
	return v
}

// done is the reader's error, or errKept when bytes are left unread.
func (r *keptReader) done() error {
	if r.err == nil && len(r.b) != 0 {
		return errKept
	}
	return r.err
}

func (r *keptReader) string() string {
	n := r.count(1)
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}
