package tally

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"sync"

	"assay/store"
)

// SampleKey names one sample (its row id) under one condition of a run.
type SampleKey struct {
	SampleRow int64
	Condition string
}

// MetricName names a metric of an evaluator.
type MetricName struct {
	Evaluator string
	Metric    string
}

// MetricSums are one metric's scores for one sample under one condition:
// their count, sum and sum of squares, from which report takes the mean and
// the standard deviation over repetitions.
type MetricSums struct {
	MetricName
	N     int
	Sum   float64
	SumSq float64
}

// SampleCounts are what one sample under one condition of a run counts,
// its repetitions folded together.
type SampleCounts struct {
	SampleKey
	Ordinal     int
	SampleID    string // the dataset's own id of the sample
	Results     int
	Errors      int // results that ended in an agent error
	JudgeErrors int // judgements that ended in an error
	Claims      int // unverified claims over every judgement
}

// SampleCondition is one sample under one condition of a run: its counts
// and the sums of its scores.
type SampleCondition struct {
	SampleCounts
	Metrics []MetricSums // a metric without a score is left out
}

// SampleStats are a run's results folded per sample and condition.
type SampleStats struct {
	Metrics []MetricName      // every metric scored, in the order the scan met them
	Rows    []SampleCondition // in dataset order, then by condition name
}

// SampleStats returns a run's results folded per sample and condition:
// the table kept when the run finished (samplestatskept.go), or one folded
// now, kept when the run is finished.
func (t *Tally) SampleStats(ctx context.Context, runID int64) (*SampleStats, error) {
	kept, v, err := t.keptSampleStats(ctx, runID)
	if err != nil || kept != nil {
		return kept, err
	}
	st, err := t.foldSampleStats(ctx, runID)
	if err != nil {
		return nil, err
	}
	t.keepSampleStats(runID, v, st)
	return st, nil
}

// foldSampleStats folds a run's results per sample and condition: its
// sample_sums rows (migration 0025), one per sample and condition,
// however many repetitions and judges. The rows are read in parts, one per
// core, each on a connection of its own (keyParts): while a run is
// running, two parts may be read a few results apart, each row whole. The
// samples' places in their dataset, which never change, are read beside.
func (t *Tally) foldSampleStats(ctx context.Context, runID int64) (*SampleStats, error) {
	defer t.index.waitedFor()()
	var places map[int64]samplePlace
	var placesErr error
	read := make(chan struct{})
	go func() {
		defer close(read)
		places, placesErr = samplePlaces(ctx, t.db.Read(), runID)
	}()
	defer func() { <-read }()
	bounds, err := t.keyParts(ctx, runID, runtime.GOMAXPROCS(0))
	if err != nil {
		return nil, fmt.Errorf("sample stats of run %d: %w", runID, err)
	}
	chunks, err := foldParts(ctx, t.db.Read(), `SELECT condition, sample_id, results, errors, judge_errors, claims, sums
		FROM sample_sums WHERE run_id = ?`, []any{runID}, bounds, sampleSumScanner, sampleSumFolder)
	if err != nil {
		return nil, fmt.Errorf("sample stats of run %d: %w", runID, err)
	}
	<-read
	if placesErr != nil {
		return nil, placesErr
	}
	parts := make([][]SampleCondition, len(chunks))
	firsts := make([]map[MetricName]firstMet, len(chunks))
	for k, c := range chunks {
		for i := range c.rows {
			p := places[c.rows[i].SampleRow]
			c.rows[i].Ordinal, c.rows[i].SampleID = p.ordinal, p.sampleID
		}
		parts[k], firsts[k] = c.rows, c.firsts
	}
	return &SampleStats{Metrics: metricOrder(firsts, parts), Rows: byPlace(parts)}, nil
}

// sampleSumRow is a row of sample_sums as scanned: its sums, and the
// sample and condition they belong to.
type sampleSumRow struct {
	aggregateRow
	SampleCondition
}

// sampleSumsSummed is a part of sample_sums folded: a row per sample and
// condition, and where each metric was first met.
type sampleSumsSummed struct {
	rows   []SampleCondition
	firsts map[MetricName]firstMet
}

// sampleSumScanner scans rows of sample_sums: one row scanned into for
// all, each returned as a copy (a row of its own escaped, one allocation
// per row). The condition is read as bytes and kept once for all its rows.
func sampleSumScanner() func(r *sql.Rows) (sampleSumRow, error) {
	var a sampleSumRow
	var last string
	var condition sql.RawBytes
	return func(r *sql.Rows) (sampleSumRow, error) {
		a = sampleSumRow{}
		if err := r.Scan(&condition, store.Int64Col{P: &a.sample}, store.IntCol{P: &a.Results}, store.IntCol{P: &a.Errors}, store.IntCol{P: &a.JudgeErrors},
			store.IntCol{P: &a.Claims}, &a.text); err != nil {
			return a, err
		}
		if string(condition) != last {
			last = string(condition)
		}
		a.condition = last
		a.SampleKey = SampleKey{a.sample, a.condition}
		return a, nil
	}
}

// sampleSumFolder sums each scanned row's metrics.
func sampleSumFolder() func([]sampleSumRow) (sampleSumsSummed, error) {
	var f summer
	return func(rows []sampleSumRow) (out sampleSumsSummed, err error) {
		out.rows = make([]SampleCondition, len(rows))
		for i := range rows {
			out.rows[i] = rows[i].SampleCondition
			if out.rows[i].Metrics, err = f.sum(rows[i].aggregateRow); err != nil {
				return out, err
			}
		}
		out.firsts = f.takeFirsts()
		return out, nil
	}
}

// keyBound is a key of sample_sums within a run: a condition, and a
// sample's row id.
type keyBound struct {
	condition string
	sample    int64
}

// keyParts cuts the keys of a run's sample_sums rows into about n ranges
// of as many keys, from the run's conditions and its dataset's row ids:
// the bounds between ranges, in order. The first range has no lower bound
// and the last no upper one, so that together they hold every row of the
// run whatever its condition.
func (t *Tally) keyParts(ctx context.Context, runID int64, n int) ([]keyBound, error) {
	var conditions []string
	if err := store.EachRow(ctx, t.db.Read(), `SELECT name FROM run_conditions WHERE run_id = ? ORDER BY name`, []any{runID},
		func(rows *sql.Rows) error {
			var c string
			err := rows.Scan(&c)
			conditions = append(conditions, c)
			return err
		}); err != nil {
		return nil, err
	}
	var lo, hi sql.NullInt64
	if err := t.db.Read().QueryRowContext(ctx, `SELECT min(id), max(id) FROM samples
		WHERE dataset_id = (SELECT dataset_id FROM runs WHERE id = ?)`, runID).Scan(&lo, &hi); err != nil {
		return nil, err
	}
	if len(conditions) == 0 || !lo.Valid {
		return nil, nil
	}
	span := hi.Int64 - lo.Int64 + 1
	total := span * int64(len(conditions))
	var bounds []keyBound
	for k := int64(1); k < int64(n); k++ {
		at := total * k / int64(n)
		b := keyBound{conditions[at/span], lo.Int64 + at%span}
		if len(bounds) == 0 || bounds[len(bounds)-1] != b {
			bounds = append(bounds, b)
		}
	}
	return bounds, nil
}

// foldParts is foldChunks over the ranges of a run's keys between bounds
// (keyParts), each read on a connection of its own beside the others: query
// selects the run's rows of a table keyed by (run_id, condition,
// sample_id), and gets each range's bounds added. Each range gets a scan of
// its own from newScan. The chunks are returned in the keys' order.
func foldParts[R, O any](ctx context.Context, db *sql.DB, query string, args []any, bounds []keyBound,
	newScan func() func(*sql.Rows) (R, error), newFold func() func([]R) (O, error)) ([]O, error) {
	parts := make([][]O, len(bounds)+1)
	errs := make([]error, len(parts))
	var wg sync.WaitGroup
	for i := range parts {
		q, a := query, slices.Clone(args)
		if i > 0 {
			q += ` AND (condition, sample_id) >= (?, ?)`
			a = append(a, bounds[i-1].condition, bounds[i-1].sample)
		}
		if i < len(bounds) {
			q += ` AND (condition, sample_id) < (?, ?)`
			a = append(a, bounds[i].condition, bounds[i].sample)
		}
		wg.Go(func() { parts[i], errs[i] = foldChunks(ctx, db, q, a, newScan(), newFold) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return slices.Concat(parts...), nil
}

// byPlace orders rows read by condition name, then sample row id, in
// parts, by their samples' places in the dataset, then by condition name:
// placed by ordinal, the rows of one sample stay in the order they were
// read. Each row is copied once: 50,000 rows of a large run.
func byPlace(parts [][]SampleCondition) []SampleCondition {
	top, n := 0, 0
	for _, rows := range parts {
		n += len(rows)
		for i := range rows {
			top = max(top, rows[i].Ordinal)
		}
	}
	if top > 4*n+1024 { // ordinals far apart: a sort needs less room
		all := slices.Concat(parts...)
		slices.SortStableFunc(all, func(a, b SampleCondition) int { return cmp.Compare(a.Ordinal, b.Ordinal) })
		return all
	}
	starts := make([]int, top+2)
	for _, rows := range parts {
		for i := range rows {
			starts[rows[i].Ordinal+1]++
		}
	}
	for i := 1; i < len(starts); i++ {
		starts[i] += starts[i-1]
	}
	out := make([]SampleCondition, n)
	for _, rows := range parts {
		for i := range rows {
			at := &starts[rows[i].Ordinal]
			out[*at] = rows[i]
			*at++
		}
	}
	return out
}

// firstMet is where a metric's first score stands in the order of results
// and judgements: the order in which SampleStats lists metrics.
type firstMet struct{ result, judgement int64 }

func (f firstMet) before(g firstMet) bool {
	return f.result < g.result || f.result == g.result && f.judgement < g.judgement
}

// summer reads rows' sums (samplesums.go), reusing its room, and keeps
// where each metric is first met.
type summer struct {
	in     names
	sums   rowSums
	firsts []metricSum  // each metric met and where first, its names interned
	room   []MetricSums // the sums of the rows read, and room for more
}

// takeFirsts returns where each metric the rows read were first met, and
// starts again.
func (f *summer) takeFirsts() map[MetricName]firstMet {
	out := make(map[MetricName]firstMet, len(f.firsts))
	for _, m := range f.firsts {
		out[m.MetricName] = m.first
	}
	f.firsts = f.firsts[:0]
	return out
}

// sum reads a row's sums per metric.
func (f *summer) sum(a aggregateRow) ([]MetricSums, error) {
	var err error
	if f.sums, err = parseSums(a.text, &f.in, f.sums); err != nil {
		return nil, fmt.Errorf("sample %d under %s: %w", a.sample, a.condition, err)
	}
	// The rows' sums share the summer's room, a row after another.
	if cap(f.room)-len(f.room) < len(f.sums) {
		f.room = make([]MetricSums, 0, max(sumsRoom, len(f.sums)))
	}
	start := len(f.room)
	for _, m := range f.sums {
		k := 0
		for k < len(f.firsts) && f.firsts[k].MetricName != m.MetricName {
			k++
		}
		if k == len(f.firsts) {
			f.firsts = append(f.firsts, m)
		} else if m.first.before(f.firsts[k].first) {
			f.firsts[k].first = m.first
		}
		f.room = append(f.room, m.MetricSums)
	}
	return f.room[start:len(f.room):len(f.room)], nil
}

// sumsRoom is how many sums a summer allocates at once.
const sumsRoom = 4096

// metricOrder lists the metrics in the order they are first met, and puts
// each row's sums in that order.
func metricOrder(firsts []map[MetricName]firstMet, parts [][]SampleCondition) []MetricName {
	all := map[MetricName]firstMet{}
	for _, f := range firsts {
		for m, at := range f {
			if g, ok := all[m]; !ok || at.before(g) {
				all[m] = at
			}
		}
	}
	order := slices.SortedFunc(maps.Keys(all), func(a, b MetricName) int {
		x, y := all[a], all[b]
		return cmp.Or(cmp.Compare(x.result, y.result), cmp.Compare(x.judgement, y.judgement), cmp.Compare(a.Metric, b.Metric))
	})
	place := func(m MetricSums) int { return slices.Index(order, m.MetricName) } // a few metrics, their names shared
	for _, rows := range parts {
		for i := range rows {
			if ms := rows[i].Metrics; !inOrder(ms, order) {
				slices.SortFunc(ms, func(a, b MetricSums) int { return cmp.Compare(place(a), place(b)) })
			}
		}
	}
	return order
}

// inOrder reports whether a row's metrics come in the order given, each
// met once along it: most rows' do, checked in one walk.
func inOrder(ms []MetricSums, order []MetricName) bool {
	k := 0
	for _, m := range ms {
		for k < len(order) && order[k] != m.MetricName {
			k++
		}
		if k == len(order) {
			return false
		}
		k++
	}
	return true
}

// samplePlace is where a sample stands in its dataset, and its own id there.
type samplePlace struct {
	ordinal  int
	sampleID string
}

// samplePlaces returns the place of every sample of a run's dataset, by row id.
func samplePlaces(ctx context.Context, tx store.Querier, runID int64) (map[int64]samplePlace, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id, ordinal, sample_id FROM samples
		WHERE dataset_id = (SELECT dataset_id FROM runs WHERE id = ?)`, runID)
	if err != nil {
		return nil, fmt.Errorf("sample places: %w", err)
	}
	defer rows.Close()
	out := map[int64]samplePlace{}
	for rows.Next() {
		var id int64
		var n samplePlace
		if err := rows.Scan(store.Int64Col{P: &id}, store.IntCol{P: &n.ordinal}, &n.sampleID); err != nil {
			return nil, fmt.Errorf("sample places: %w", err)
		}
		out[id] = n
	}
	return out, rows.Err()
}
