package tally

import (
	"context"
	"encoding/binary"
)

// A finished run's samples table (SampleStats) is kept once folded
// (kept.go).

// keptStatsFormat names the encoding of a kept table; a table kept in
// another is folded again.
const keptStatsFormat = 2

// keptSampleStats returns the run's kept table when it is of the run's
// results as they stand, or nil, and that version.
func (t *Tally) keptSampleStats(ctx context.Context, runID int64) (*SampleStats, keptVersion, error) {
	var st *SampleStats
	v, err := readKept(ctx, t.db.Read(), "sample_stats_kept", runID, func(b []byte) {
		st, _ = decodeSampleStats(b) // one that does not read is folded again, and kept again
	})
	return st, v, err
}

// keepSampleStats keeps st as the table of the run's results at version v.
func (t *Tally) keepSampleStats(runID int64, v keptVersion, st *SampleStats) {
	t.keep("sample_stats_kept", runID, v, func() []byte { return encodeSampleStats(st) })
}

// encodeSampleStats writes st as: the format; the metrics' names; the
// conditions' names; the count of rows and of their sums; then each row
// — its sample's row id less the previous row's (its ordinal and id
// follow when it is another sample), its condition's place, its four
// counts and its sums (the metric's place, N, the sum and the sum of
// squares, each a number: appendNumber). About 20 bytes a row of three
// metrics scored in whole points, a third of each sum as its float64 bits.
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

// decodeSampleStats reads a table encodeSampleStats wrote: its rows in
// one array, their sums in another.
func decodeSampleStats(b []byte) (*SampleStats, error) {
	r := &keptReader{b: b}
	if r.uvarint() != keptStatsFormat {
		return nil, errKept
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
			return nil, errKept
		}
		row.SampleKey = SampleKey{SampleRow: sample, Condition: conditions[c]}
		row.Ordinal, row.SampleID = ordinal, sampleID
		row.Results, row.Errors, row.JudgeErrors, row.Claims = int(r.uvarint()), int(r.uvarint()), int(r.uvarint()), int(r.uvarint())
		var err error
		if row.Metrics, room, err = r.rowSums(room, st.Metrics); err != nil {
			return nil, err
		}
	}
	if err := r.done(); err != nil {
		return nil, err
	}
	return st, nil
}

// rowSums reads a row's sums into the room made for them, returning them
// and the room left.
func (r *keptReader) rowSums(room []MetricSums, metrics []MetricName) ([]MetricSums, []MetricSums, error) {
	n := int(r.uvarint())
	if n > len(room) {
		return nil, room, errKept
	}
	if n == 0 {
		return nil, room, nil
	}
	sums := room[:n:n]
	for k := range sums {
		m := r.uvarint()
		if m >= uint64(len(metrics)) {
			return nil, room, errKept
		}
		sums[k] = MetricSums{MetricName: metrics[m], N: int(r.uvarint()), Sum: r.number(), SumSq: r.number()}
	}
	return sums, room[n:], nil
}
