package store

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"maps"
	"runtime"
	"slices"
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

// SampleStats folds a run's results per sample and condition: its
// sample_scores rows (migration 0020), one per sample and condition,
// however many repetitions and judges, in one snapshot.
func (db *DB) SampleStats(ctx context.Context, runID int64) (*SampleStats, error) {
	tx, err := db.beginRead(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	places, err := samplePlaces(ctx, tx, runID)
	if err != nil {
		return nil, err
	}
	var rows []aggregateRow
	out := &SampleStats{}
	err = eachRow(ctx, tx, `SELECT condition, sample_id, results, errors, judge_errors, claims, scores
		FROM sample_scores WHERE run_id = ?`, []any{runID}, func(r *sql.Rows) error {
		var a aggregateRow
		var c SampleCondition
		if err := r.Scan(&a.condition, &a.sample, &c.Results, &c.Errors, &c.JudgeErrors, &c.Claims, &a.text); err != nil {
			return err
		}
		if n := len(rows); n > 0 && rows[n-1].condition == a.condition {
			a.condition = rows[n-1].condition // one copy of each name
		}
		n := places[a.sample]
		c.SampleKey, c.Ordinal, c.SampleID = SampleKey{a.sample, a.condition}, n.ordinal, n.sampleID
		rows = append(rows, a)
		out.Rows = append(out.Rows, c)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("sample stats: %w", err)
	}
	firsts := make([]map[MetricName]firstMet, runtime.GOMAXPROCS(0))
	err = inParts(len(rows), len(firsts), func(p, lo, hi int) (err error) {
		firsts[p], err = sumRows(rows[lo:hi], out.Rows[lo:hi])
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("sample stats of run %d: %w", runID, err)
	}
	out.Metrics = metricOrder(firsts, out.Rows)
	slices.SortFunc(out.Rows, func(a, b SampleCondition) int {
		return cmp.Or(cmp.Compare(a.Ordinal, b.Ordinal), cmp.Compare(a.Condition, b.Condition))
	})
	return out, nil
}

// firstMet is where a metric's first score stands in the order of results
// and judgements: the order in which SampleStats lists metrics.
type firstMet struct{ result, judgement int64 }

func (f firstMet) before(g firstMet) bool {
	return f.result < g.result || f.result == g.result && f.judgement < g.judgement
}

// sumRows sums each row's scores per metric, adding them in the order of
// results, judgements and metrics, and says where each metric is first met.
func sumRows(rows []aggregateRow, out []SampleCondition) (map[MetricName]firstMet, error) {
	in := names{}
	firsts := map[MetricName]firstMet{}
	type placed struct {
		at firstMet
		m  MetricName
		v  float64
	}
	var one []placed
	var lines sampleLines
	for i, a := range rows {
		if err := lines.parse(a.text, in); err != nil {
			return nil, fmt.Errorf("sample %d under %s: %w", a.sample, a.condition, err)
		}
		one = one[:0]
		for _, s := range lines.scores {
			j := &lines.judgements[s.at]
			one = append(one, placed{firstMet{j.result, j.id}, MetricName{j.evaluator, s.metric}, s.value})
		}
		slices.SortFunc(one, func(x, y placed) int {
			return cmp.Or(cmp.Compare(x.at.result, y.at.result), cmp.Compare(x.at.judgement, y.at.judgement),
				cmp.Compare(x.m.Metric, y.m.Metric), cmp.Compare(x.v, y.v))
		})
		var sums []MetricSums
		for _, p := range one {
			if f, ok := firsts[p.m]; !ok || p.at.before(f) {
				firsts[p.m] = p.at
			}
			k := slices.IndexFunc(sums, func(s MetricSums) bool { return s.MetricName == p.m })
			if k < 0 {
				k = len(sums)
				sums = append(sums, MetricSums{MetricName: p.m})
			}
			sums[k].N++
			sums[k].Sum += p.v
			sums[k].SumSq += p.v * p.v
		}
		out[i].Metrics = sums
	}
	return firsts, nil
}

// metricOrder lists the metrics in the order they are first met, and puts
// each row's sums in that order.
func metricOrder(firsts []map[MetricName]firstMet, rows []SampleCondition) []MetricName {
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
	place := map[MetricName]int{}
	for i, m := range order {
		place[m] = i
	}
	for i := range rows {
		slices.SortFunc(rows[i].Metrics, func(a, b MetricSums) int { return cmp.Compare(place[a.MetricName], place[b.MetricName]) })
	}
	return order
}

// samplePlace is where a sample stands in its dataset, and its own id there.
type samplePlace struct {
	ordinal  int
	sampleID string
}

// samplePlaces returns the place of every sample of a run's dataset, by row id.
func samplePlaces(ctx context.Context, tx querier, runID int64) (map[int64]samplePlace, error) {
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
		if err := rows.Scan(&id, &n.ordinal, &n.sampleID); err != nil {
			return nil, fmt.Errorf("sample places: %w", err)
		}
		out[id] = n
	}
	return out, rows.Err()
}
