package tally

import (
	"context"
	"encoding/binary"
	"math"

	"assay/store"
)

// A finished run's scores, as its report folds them from its sample_scores
// rows (MetricScores), are kept once folded (kept.go): about 80 ms of CPU
// of a 150,000-result report's first request, a third of it.

// keptScoresFormat names the encoding of kept scores; scores kept in
// another are folded again.
const keptScoresFormat = 1

// reportScores returns a run's scores through tx: those kept, when they
// are of its results as they stand, or folded now, and kept when the run
// is finished.
func (t *Tally) reportScores(ctx context.Context, tx store.Querier, runID int64) ([]MetricScores, error) {
	var kept []MetricScores
	read := false
	v, err := readKept(ctx, tx, "report_scores_kept", runID, func(b []byte) {
		var err error
		kept, err = decodeScores(b)
		read = err == nil // scores that do not read are folded again, and kept again
	})
	if err != nil {
		return nil, err
	}
	if read {
		return kept, nil
	}
	ms, err := metricScores(ctx, tx, runID)
	if err != nil {
		return nil, err
	}
	t.keep("report_scores_kept", runID, v, func() []byte { return encodeScores(ms) })
	return ms, nil
}

// encodeScores writes ms as: the format and the count of columns; then
// each column's condition, evaluator and metric, its judges' names, its
// counts of samples, starts and scores, its samples (each less the one
// before), its starts (each less the one before), and each score — its id
// less the one before, its value (appendNumber), its repetition, judge and
// judge repetition. About 6 bytes a score in whole points.
func encodeScores(ms []MetricScores) []byte {
	b := binary.AppendUvarint(nil, keptScoresFormat)
	b = binary.AppendUvarint(b, uint64(len(ms)))
	for i := range ms {
		m := &ms[i]
		b = appendString(appendString(appendString(b, m.Condition), m.Evaluator), m.Metric)
		b = binary.AppendUvarint(b, uint64(len(m.JudgeNames)))
		for _, n := range m.JudgeNames {
			b = appendString(b, n)
		}
		b = binary.AppendUvarint(b, uint64(len(m.Samples)))
		b = binary.AppendUvarint(b, uint64(len(m.Starts)))
		b = binary.AppendUvarint(b, uint64(len(m.Values)))
		var prev int64
		for _, s := range m.Samples {
			b = binary.AppendVarint(b, s-prev)
			prev = s
		}
		prev = 0
		for _, s := range m.Starts {
			b = binary.AppendVarint(b, int64(s)-prev)
			prev = int64(s)
		}
		prev = 0
		for k := range m.Values {
			b = binary.AppendVarint(b, m.IDs[k]-prev)
			prev = m.IDs[k]
			b = appendNumber(b, m.Values[k])
			b = binary.AppendVarint(b, int64(m.Reps[k]))
			b = binary.AppendVarint(b, int64(m.Judges[k]))
			b = binary.AppendVarint(b, int64(m.JudgeReps[k]))
		}
	}
	return b
}

// decodeScores reads scores encodeScores wrote, each column's in slices
// of their own length, and checks that every start and judge is in range.
func decodeScores(b []byte) ([]MetricScores, error) {
	r := &keptReader{b: b}
	if r.uvarint() != keptScoresFormat {
		return nil, errKept
	}
	n := r.count(7)
	if n == 0 {
		return nil, r.done()
	}
	out := make([]MetricScores, n)
	for i := range out {
		if err := r.metricScores(&out[i]); err != nil {
			return nil, err
		}
	}
	return out, r.done()
}

// metricScores reads one metric's scores under one condition.
func (r *keptReader) metricScores(m *MetricScores) error {
	m.Condition, m.Evaluator, m.Metric = r.string(), r.string(), r.string()
	m.JudgeNames = make([]string, r.count(1))
	for k := range m.JudgeNames {
		m.JudgeNames[k] = r.string()
	}
	samples, starts, scores := r.count(1), r.count(1), r.count(5)
	if r.err != nil || starts != samples+1 {
		return errKept
	}
	m.Samples, m.Starts = make([]int64, samples), make([]int32, starts)
	m.IDs, m.Values = make([]int64, scores), make([]float64, scores)
	m.Reps, m.Judges, m.JudgeReps = make([]int32, scores), make([]int8, scores), make([]int16, scores)
	var at int64
	for k := range m.Samples {
		at += r.varint()
		m.Samples[k] = at
	}
	at = 0
	for k := range m.Starts {
		at += r.varint()
		if at < 0 || at > int64(scores) || k > 0 && at < int64(m.Starts[k-1]) {
			return errKept
		}
		m.Starts[k] = int32(at)
	}
	if at != int64(scores) {
		return errKept
	}
	if err := r.scoreColumns(m); err != nil {
		return err
	}
	return r.err
}

// scoreColumns reads each score's id, value, repetition and judge.
func (r *keptReader) scoreColumns(m *MetricScores) error {
	var at int64
	for k := range m.Values {
		at += r.varint()
		m.IDs[k] = at
		m.Values[k] = r.number()
		rep, judge, judgeRep := r.varint(), r.varint(), r.varint()
		if rep < math.MinInt32 || rep > math.MaxInt32 || judge < 0 || judge > math.MaxInt8 || judge >= int64(len(m.JudgeNames)) ||
			judgeRep < math.MinInt16 || judgeRep > math.MaxInt16 {
			return errKept
		}
		m.Reps[k], m.Judges[k], m.JudgeReps[k] = int32(rep), int8(judge), int16(judgeRep)
	}
	return nil
}
