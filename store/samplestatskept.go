package store

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"
)

// A finished run's samples table (SampleStats) is kept in the database
// once folded (migration 0033), with the version of the run's results it
// was folded from: their count, the last one's id and when the run
// finished. A server that starts, or that forgot the table, reads it in
// one row while the run's results still stand so; a run resumed, or
// whose failed tasks are cleared, no longer matches it, and its table is
// folded again and kept again once it finishes. It is kept when first
// made — a finished run's report page makes it in the background — and
// not by the run's end: the fold holds every row, about 350 bytes each,
// and `assay run` over 100,000 questions peaked at 96 MiB instead of 61
// when its end folded them.

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

// keptStatsFormat names the encoding of a kept table; a table kept in
// another is folded again.
const keptStatsFormat = 2

// keptSampleStats returns the run's kept table when it is of the run's
// results as they stand, or nil, and that version. The table is read
// where the driver put it, not copied again.
func (db *DB) keptSampleStats(ctx context.Context, runID int64) (*SampleStats, keptVersion, error) {
	var v keptVersion
	var st *SampleStats
	err := eachRow(ctx, db.read, `SELECT r.status, r.results_count, r.results_last, coalesce(r.finished_at, ''), k.stats
		FROM runs r LEFT JOIN sample_stats_kept k ON k.run_id = r.id AND k.results_count = r.results_count
			AND k.results_last = r.results_last AND k.finished_at = r.finished_at
		WHERE r.id = ?`, []any{runID}, func(rows *sql.Rows) error {
		var status RunStatus
		var blob sql.RawBytes
		if err := rows.Scan(&status, &v.count, &v.last, &v.at, &blob); err != nil {
			return err
		}
		v.finished = status.Finished() && status != RunDeleting && status != RunImporting && v.at != ""
		if blob != nil {
			st, _ = decodeSampleStats(blob) // one that does not read is folded again, and kept again
		}
		return nil
	})
	if err != nil {
		return nil, v, fmt.Errorf("sample stats of run %d: %w", runID, err)
	}
	return st, v, nil
}

// keepSampleStats keeps st as the table of the run's results at version
// v, in the background: it is written only if the run's results still
// stand at v when the write commits.
func (db *DB) keepSampleStats(runID int64, v keptVersion, st *SampleStats) {
	if !v.finished {
		return
	}
	blob := encodeSampleStats(st)
	db.keeping.Go(func() {
		// Not kept (a full disk, the database closing), it is folded
		// again the next time.
		_ = db.commit(context.Background(), func(ctx context.Context, tx writer) error {
			_, err := tx.ExecContext(ctx, qKeepSampleStats, runID, v.count, v.last, v.at, blob)
			return err
		})
	})
}

const qKeepSampleStats = `INSERT INTO sample_stats_kept (run_id, results_count, results_last, finished_at, stats)
	SELECT id, results_count, results_last, finished_at, ?5 FROM runs
	WHERE id = ?1 AND results_count = ?2 AND results_last = ?3 AND finished_at = ?4
	ON CONFLICT (run_id) DO UPDATE SET results_count = excluded.results_count,
		results_last = excluded.results_last, finished_at = excluded.finished_at, stats = excluded.stats`

// encodeSampleStats writes st as: the format; the metrics' names; the
// conditions' names; the count of rows and of their sums; then each row
// — its sample's row id less the previous row's (its ordinal and id
// follow when it is another sample), its condition's place, its four
// counts and its sums (the metric's place, N, the sum and the sum of
// squares, each a number: appendNumber). About 20 bytes a row of three
// metrics scored in whole points; 62 with each sum as its float64 bits,
// whose 3 MB took a fresh process 20–30 ms more to read.
func encodeSampleStats(st *SampleStats) []byte {
	var conditions []string
	place := map[string]int{}
	sums := 0
	for i := range st.Rows {
		c := st.Rows[i].Condition
		if _, ok := place[c]; !ok {
			place[c] = len(conditions)
			conditions = append(conditions, c)
		}
		sums += len(st.Rows[i].Metrics)
	}
	metric := make(map[MetricName]int, len(st.Metrics))
	b := binary.AppendUvarint(nil, keptStatsFormat)
	b = binary.AppendUvarint(b, uint64(len(st.Metrics)))
	for i, m := range st.Metrics {
		metric[m] = i
		b = appendString(appendString(b, m.Evaluator), m.Metric)
	}
	b = binary.AppendUvarint(b, uint64(len(conditions)))
	for _, c := range conditions {
		b = appendString(b, c)
	}
	b = binary.AppendUvarint(b, uint64(len(st.Rows)))
	b = binary.AppendUvarint(b, uint64(sums))
	var prev int64
	for i := range st.Rows {
		r := &st.Rows[i]
		b = binary.AppendVarint(b, r.SampleRow-prev)
		if i == 0 || r.SampleRow != prev {
			b = binary.AppendUvarint(b, uint64(r.Ordinal))
			b = appendString(b, r.SampleID)
		}
		prev = r.SampleRow
		b = binary.AppendUvarint(b, uint64(place[r.Condition]))
		for _, n := range []int{r.Results, r.Errors, r.JudgeErrors, r.Claims} {
			b = binary.AppendUvarint(b, uint64(n))
		}
		b = binary.AppendUvarint(b, uint64(len(r.Metrics)))
		for _, m := range r.Metrics {
			b = binary.AppendUvarint(b, uint64(metric[m.MetricName]))
			b = binary.AppendUvarint(b, uint64(m.N))
			b = appendNumber(appendNumber(b, m.Sum), m.SumSq)
		}
	}
	return b
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

// errKeptStats is a kept table that does not read as encodeSampleStats writes.
var errKeptStats = errors.New("a kept samples table that does not read")

// keptReader reads what encodeSampleStats wrote, remembering its first error.
type keptReader struct {
	b   []byte
	err error
}

func (r *keptReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err, r.b = errKeptStats, nil
		return 0
	}
	r.b = r.b[n:]
	return v
}

// count reads a count of things each taking at least least bytes more.
func (r *keptReader) count(least int) int {
	v := r.uvarint()
	if v > uint64(len(r.b)/least) {
		r.err, r.b = errKeptStats, nil
		return 0
	}
	return int(v)
}

func (r *keptReader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.err, r.b = errKeptStats, nil
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
		r.err, r.b = errKeptStats, nil
		return 0
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(r.b))
	r.b = r.b[8:]
	return v
}

func (r *keptReader) string() string {
	n := r.count(1)
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

// decodeSampleStats reads a table encodeSampleStats wrote: its rows in
// one array, their sums in another.
func decodeSampleStats(b []byte) (*SampleStats, error) {
	r := &keptReader{b: b}
	if r.uvarint() != keptStatsFormat {
		return nil, errKeptStats
	}
	st := &SampleStats{}
	if n := r.count(2); n > 0 {
		st.Metrics = make([]MetricName, n)
		for i := range st.Metrics {
			st.Metrics[i] = MetricName{Evaluator: r.string(), Metric: r.string()}
		}
	}
	conditions := make([]string, r.count(1))
	for i := range conditions {
		conditions[i] = r.string()
	}
	rows := r.count(7)
	room := make([]MetricSums, r.count(4))
	if rows > 0 {
		st.Rows = make([]SampleCondition, rows)
	}
	var sample int64
	var ordinal int
	var sampleID string
	for i := range st.Rows {
		if r.err != nil {
			return nil, r.err
		}
		row := &st.Rows[i]
		if d := r.varint(); i == 0 || d != 0 {
			sample += d
			ordinal, sampleID = int(r.uvarint()), r.string()
		}
		c := r.uvarint()
		if c >= uint64(len(conditions)) {
			return nil, errKeptStats
		}
		row.SampleKey = SampleKey{SampleRow: sample, Condition: conditions[c]}
		row.Ordinal, row.SampleID = ordinal, sampleID
		row.Results, row.Errors, row.JudgeErrors, row.Claims = int(r.uvarint()), int(r.uvarint()), int(r.uvarint()), int(r.uvarint())
		n := int(r.uvarint())
		if n > len(room) {
			return nil, errKeptStats
		}
		if n > 0 {
			row.Metrics, room = room[:n:n], room[n:]
		}
		for k := range row.Metrics {
			m := r.uvarint()
			if m >= uint64(len(st.Metrics)) {
				return nil, errKeptStats
			}
			row.Metrics[k] = MetricSums{MetricName: st.Metrics[m], N: int(r.uvarint()), Sum: r.number(), SumSq: r.number()}
		}
	}
	if r.err != nil || len(r.b) != 0 {
		return nil, errKeptStats
	}
	return st, nil
}
