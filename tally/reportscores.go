package tally

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"

	"assay/store"
)

// MetricScores are a run's scores of one metric under one condition, sample
// by sample, in columns: sample k's scores are entries Starts[k] to
// Starts[k+1]-1, in the order of repetition, panel judge and judge
// repetition. A report folds them as they are: no row per score is made.
type MetricScores struct {
	Condition string
	Evaluator string
	Metric    string
	Samples   []int64 // the samples' row ids, ascending
	Starts    []int32 // where each sample's entries start, and one more: the end
	IDs       []int64 // the scores' row ids, which verdicts name
	Values    []float64
	Reps      []int32 // the repetition of the answer scored
	Judges    []int8  // the panel place of the judge
	JudgeReps []int16 // the judge's repetition of that answer, from 0
	// JudgeNames name the judges by panel place: "" for a deterministic
	// evaluator and for a run's one judge.
	JudgeNames []string
}

// Len is how many scores m holds.
func (m *MetricScores) Len() int { return len(m.Values) }

// Judged reports whether entry i is a panel judge's score.
func (m *MetricScores) Judged(i int) bool { return m.JudgeNames[m.Judges[i]] != "" }

// ScoreRows are the scores of ms one row each, as ReportData orders them.
func ScoreRows(ms []MetricScores) []store.ScoreRow {
	var out []store.ScoreRow
	for _, m := range ms {
		for k, sample := range m.Samples {
			for i := m.Starts[k]; i < m.Starts[k+1]; i++ {
				out = append(out, store.ScoreRow{ID: m.IDs[i], SampleRow: sample, Condition: m.Condition, Repetition: int(m.Reps[i]),
					JudgeRepetition: int(m.JudgeReps[i]), Judge: m.JudgeNames[m.Judges[i]], JudgeIndex: int(m.Judges[i]),
					Evaluator: m.Evaluator, Metric: m.Metric, Value: m.Values[i]})
			}
		}
	}
	return out
}

// aggregateRow is one sample_scores row as read.
type aggregateRow struct {
	condition string
	sample    int64
	text      string
}

// scoreBucket holds the scores of one metric under one condition.
type scoreBucket struct{ condition, evaluator, metric string }

func compareBuckets(a, b scoreBucket) int {
	return cmp.Or(cmp.Compare(a.condition, b.condition), cmp.Compare(a.evaluator, b.evaluator), cmp.Compare(a.metric, b.metric))
}

// metricScores reads a run's scores from its sample_scores rows, ordered by
// condition, evaluator and metric. The rows come by condition and sample;
// workers fold chunks of them while later ones are read, and the chunks'
// columns are joined in order.
func metricScores(ctx context.Context, tx store.Querier, runID int64) ([]MetricScores, error) {
	chunks, err := foldChunks(ctx, tx, `SELECT condition, sample_id, scores FROM sample_scores WHERE run_id = ? AND scores != ''
		ORDER BY condition, sample_id`, []any{runID}, func(r *sql.Rows) (a aggregateRow, err error) {
		err = r.Scan(&a.condition, store.Int64Col{P: &a.sample}, &a.text)
		return a, err
	}, func() func([]aggregateRow) (map[scoreBucket]*MetricScores, error) {
		f := folder{}
		return f.fold
	})
	if err != nil {
		return nil, fmt.Errorf("report scores of run %d: %w", runID, err)
	}
	keys := map[scoreBucket]bool{}
	for _, c := range chunks {
		for k := range c {
			keys[k] = true
		}
	}
	var out []MetricScores
	for _, k := range slices.SortedFunc(maps.Keys(keys), compareBuckets) {
		var parts []*MetricScores
		for _, c := range chunks {
			if m := c[k]; m != nil {
				parts = append(parts, m)
			}
		}
		m, err := joinScores(parts)
		if err != nil {
			return nil, fmt.Errorf("report scores of run %d, %s under %s: %w", runID, k.metric, k.condition, err)
		}
		out = append(out, m)
	}
	return out, nil
}

// joinScores puts the columns of one metric's chunks end to end.
func joinScores(parts []*MetricScores) (MetricScores, error) {
	if len(parts) == 1 {
		m := *parts[0]
		m.Starts = append(m.Starts, int32(len(m.Values)))
		return m, nil
	}
	var samples, scores int
	for _, p := range parts {
		samples += len(p.Samples)
		scores += len(p.Values)
	}
	first := parts[0]
	m := MetricScores{Condition: first.Condition, Evaluator: first.Evaluator, Metric: first.Metric,
		Samples: make([]int64, 0, samples), Starts: make([]int32, 0, samples+1), IDs: make([]int64, 0, scores),
		Values: make([]float64, 0, scores), Reps: make([]int32, 0, scores), Judges: make([]int8, 0, scores),
		JudgeReps: make([]int16, 0, scores)}
	for _, p := range parts {
		at := int32(len(m.Values))
		for _, s := range p.Starts {
			m.Starts = append(m.Starts, at+s)
		}
		m.Samples = append(m.Samples, p.Samples...)
		m.IDs = append(m.IDs, p.IDs...)
		m.Values = append(m.Values, p.Values...)
		m.Reps = append(m.Reps, p.Reps...)
		m.Judges = append(m.Judges, p.Judges...)
		m.JudgeReps = append(m.JudgeReps, p.JudgeReps...)
		for place, name := range p.JudgeNames {
			var err error
			if m.JudgeNames, err = nameJudge(m.JudgeNames, place, name); err != nil {
				return m, err
			}
		}
	}
	m.Starts = append(m.Starts, int32(len(m.Values)))
	return m, nil
}

// folder folds sample_scores rows into columns, reusing its room.
type folder struct {
	in     names
	lines  sampleLines
	groups []metricGroup
	// The columns of the row's condition met so far: rows come by
	// condition, and a condition has a few metrics.
	condition string
	columns   []*MetricScores
}

// metricGroup is a row's scores of one metric: their places in its lines.
type metricGroup struct {
	evaluator, metric string
	at                []int
}

// fold turns rows, by condition and sample, into columns by condition,
// evaluator and metric; each column's Starts lacks its end.
func (f *folder) fold(rows []aggregateRow) (map[scoreBucket]*MetricScores, error) {
	buckets := map[scoreBucket]*MetricScores{}
	f.condition, f.columns = "", f.columns[:0]
	for r, a := range rows {
		if err := f.lines.parse(a.text, &f.in); err != nil {
			return nil, fmt.Errorf("sample %d under %s: %w", a.sample, a.condition, err)
		}
		if a.condition != f.condition {
			f.condition, f.columns = a.condition, f.columns[:0]
		}
		for _, g := range f.group() {
			m := f.column(buckets, a.condition, g, len(rows)-r)
			m.Samples = append(m.Samples, a.sample)
			m.Starts = append(m.Starts, int32(len(m.Values)))
			for _, i := range g.at {
				s := &f.lines.scores[i]
				j := &f.lines.judgements[s.at]
				index, rep := store.FromSlot(j.slot)
				if index > 127 || rep > 32767 {
					return nil, fmt.Errorf("sample %d under %s: judgement %d has place %d, repetition %d", a.sample, a.condition, j.id, index, rep)
				}
				var err error
				if m.JudgeNames, err = nameJudge(m.JudgeNames, index, j.judge); err != nil {
					return nil, fmt.Errorf("sample %d under %s: %w", a.sample, a.condition, err)
				}
				m.IDs = append(m.IDs, s.id)
				m.Values = append(m.Values, s.value)
				m.Reps = append(m.Reps, int32(j.rep))
				m.Judges = append(m.Judges, int8(index))
				m.JudgeReps = append(m.JudgeReps, int16(rep))
			}
		}
	}
	return buckets, nil
}

// group sorts the row's scores by evaluator and metric, then by the
// repetition and the judge's place and repetition: lines come in the
// order results committed, which is most often that order already.
func (f *folder) group() []metricGroup {
	lines := &f.lines
	groups := f.groups[:0]
	for i := range lines.scores {
		s := &lines.scores[i]
		j := &lines.judgements[s.at]
		k := 0
		for k < len(groups) && (groups[k].evaluator != j.evaluator || groups[k].metric != s.metric) {
			k++
		}
		if k == len(groups) {
			if k < cap(groups) {
				groups = groups[:k+1]
				groups[k].evaluator, groups[k].metric, groups[k].at = j.evaluator, s.metric, groups[k].at[:0]
			} else {
				groups = append(groups, metricGroup{evaluator: j.evaluator, metric: s.metric})
			}
		}
		groups[k].at = append(groups[k].at, i)
	}
	slices.SortFunc(groups, func(x, y metricGroup) int {
		return cmp.Or(cmp.Compare(x.evaluator, y.evaluator), cmp.Compare(x.metric, y.metric))
	})
	byPlace := func(x, y int) int {
		jx, jy := &lines.judgements[lines.scores[x].at], &lines.judgements[lines.scores[y].at]
		return cmp.Or(cmp.Compare(jx.rep, jy.rep), cmp.Compare(jx.slot, jy.slot))
	}
	for _, g := range groups {
		if !slices.IsSortedFunc(g.at, byPlace) {
			slices.SortFunc(g.at, byPlace)
		}
	}
	f.groups = groups
	return groups
}

// column returns the columns of a metric under the row's condition. New
// ones have room for the rows left in the chunk, each with as many scores
// as this one: growing them from nothing copied a tenth of a report's
// first CPU.
func (f *folder) column(buckets map[scoreBucket]*MetricScores, condition string, g metricGroup, rowsLeft int) *MetricScores {
	for _, m := range f.columns {
		if m.Evaluator == g.evaluator && m.Metric == g.metric {
			return m
		}
	}
	k := scoreBucket{condition, g.evaluator, g.metric}
	m := buckets[k]
	if m == nil {
		n := rowsLeft * len(g.at)
		m = &MetricScores{Condition: f.in.intern(condition), Evaluator: g.evaluator, Metric: g.metric,
			Samples: make([]int64, 0, rowsLeft), Starts: make([]int32, 0, rowsLeft+1), IDs: make([]int64, 0, n),
			Values: make([]float64, 0, n), Reps: make([]int32, 0, n), Judges: make([]int8, 0, n), JudgeReps: make([]int16, 0, n)}
		buckets[k] = m
	}
	f.columns = append(f.columns, m)
	return m
}

// nameJudge names the judge at a panel place. A place not named yet is ""
// (as is a run's one judge): two names for one place are an error.
func nameJudge(names []string, place int, name string) ([]string, error) {
	for len(names) <= place {
		names = append(names, "")
	}
	switch {
	case names[place] == "":
		names[place] = name
	case name != "" && names[place] != name:
		return names, fmt.Errorf("panel place %d is judge %q and judge %q", place, names[place], name)
	}
	return names, nil
}
