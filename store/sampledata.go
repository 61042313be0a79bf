package store

import (
	"cmp"
	"context"
	"fmt"
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

// sampleFold is the state of SampleStats between its scans.
type sampleFold struct {
	stats      *SampleStats
	byResult   map[int64]int32    // result id → row
	evaluators map[int64]string   // judgement id → evaluator
	sums       [][]MetricSums     // row → metric index → sums
	metrics    map[MetricName]int // metric → index in names
	names      []MetricName
}

// SampleStats folds a run's results, judgements and scores per sample and
// condition: scans of the covering indexes of migration 0002, and of the
// judgements with claims (0003), folded in memory, however many samples the
// run has. As with ReportData, a result saved during the scans may lack
// its judgements here, never the reverse.
func (db *DB) SampleStats(ctx context.Context, runID int64) (*SampleStats, error) {
	f := &sampleFold{stats: &SampleStats{}, byResult: map[int64]int32{}, evaluators: map[int64]string{},
		metrics: map[MetricName]int{}}
	tx, err := db.beginRead(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	if err := foldResults(ctx, tx, runID, f); err != nil {
		return nil, err
	}
	if err := foldJudgements(ctx, tx, runID, f); err != nil {
		return nil, err
	}
	if err := foldScores(ctx, tx, runID, f); err != nil {
		return nil, err
	}
	f.finish()
	return f.stats, nil
}

// foldResults makes one row per (sample, condition) and counts its results and errors.
func foldResults(ctx context.Context, tx querier, runID int64, f *sampleFold) error {
	places, err := samplePlaces(ctx, tx, runID)
	if err != nil {
		return err
	}
	rows, err := tx.QueryContext(ctx, `SELECT id, sample_id, condition, error != ''
		FROM results INDEXED BY results_report WHERE run_id = ?`, runID)
	if err != nil {
		return fmt.Errorf("sample stats: %w", err)
	}
	defer rows.Close()
	index := map[SampleKey]int32{}
	for rows.Next() {
		var id int64
		var k SampleKey
		var failed bool
		if err := rows.Scan(&id, &k.SampleRow, &k.Condition, &failed); err != nil {
			return fmt.Errorf("sample stats: %w", err)
		}
		i, ok := index[k]
		if !ok {
			i = int32(len(f.stats.Rows))
			index[k] = i
			n := places[k.SampleRow]
			f.stats.Rows = append(f.stats.Rows, SampleCondition{SampleCounts: SampleCounts{SampleKey: k, Ordinal: n.ordinal, SampleID: n.sampleID}})
		}
		f.byResult[id] = i
		f.stats.Rows[i].Results++
		f.stats.Rows[i].Errors += b2i(failed)
	}
	return rows.Err()
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

// foldJudgements counts judge errors and notes each judgement's evaluator.
func foldJudgements(ctx context.Context, tx querier, runID int64, f *sampleFold) error {
	rows, err := tx.QueryContext(ctx, `SELECT id, result_id, evaluator, error != ''
		FROM judgements INDEXED BY judgements_report WHERE run_id = ?`, runID)
	if err != nil {
		return fmt.Errorf("sample judgements: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, resultID int64
		var evaluator string
		var failed bool
		if err := rows.Scan(&id, &resultID, &evaluator, &failed); err != nil {
			return fmt.Errorf("sample judgements: %w", err)
		}
		if i, ok := f.byResult[resultID]; ok { // else saved after the scan of results
			f.evaluators[id] = evaluator
			f.stats.Rows[i].JudgeErrors += b2i(failed)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sample judgements: %w", err)
	}
	return foldClaims(ctx, tx, runID, f)
}

// foldClaims counts unverified claims, reading only the judgements that have some.
func foldClaims(ctx context.Context, tx querier, runID int64, f *sampleFold) error {
	rows, err := tx.QueryContext(ctx, `SELECT result_id, json_array_length(unverified_claims)
		FROM judgements INDEXED BY judgements_claims WHERE run_id = ? AND unverified_claims != '[]'`, runID)
	if err != nil {
		return fmt.Errorf("sample claims: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var resultID int64
		var claims int
		if err := rows.Scan(&resultID, &claims); err != nil {
			return fmt.Errorf("sample claims: %w", err)
		}
		if i, ok := f.byResult[resultID]; ok {
			f.stats.Rows[i].Claims += claims
		}
	}
	return rows.Err()
}

// foldScores sums each metric's scores per row.
func foldScores(ctx context.Context, tx querier, runID int64, f *sampleFold) error {
	rows, err := tx.QueryContext(ctx, `SELECT result_id, judgement_id, metric, value
		FROM scores INDEXED BY scores_report WHERE run_id = ?`, runID)
	if err != nil {
		return fmt.Errorf("sample scores: %w", err)
	}
	defer rows.Close()
	f.sums = make([][]MetricSums, len(f.stats.Rows))
	for rows.Next() {
		var resultID, judgementID int64
		var m MetricName
		var v float64
		if err := rows.Scan(&resultID, &judgementID, &m.Metric, &v); err != nil {
			return fmt.Errorf("sample scores: %w", err)
		}
		var ok bool
		if m.Evaluator, ok = f.evaluators[judgementID]; !ok {
			continue // its judgement was saved after the scan of judgements
		}
		f.add(f.byResult[resultID], m, v)
	}
	return rows.Err()
}

func (f *sampleFold) add(row int32, m MetricName, v float64) {
	k, ok := f.metrics[m]
	if !ok {
		k = len(f.metrics)
		f.metrics[m] = k
		f.names = append(f.names, m)
	}
	sums := f.sums[row]
	for len(sums) <= k {
		sums = append(sums, MetricSums{})
	}
	sums[k].MetricName = m
	sums[k].N++
	sums[k].Sum += v
	sums[k].SumSq += v * v
	f.sums[row] = sums
}

// finish keeps each row's sums of the metrics it has, and puts the rows in
// dataset order.
func (f *sampleFold) finish() {
	f.stats.Metrics = f.names
	for i, sums := range f.sums {
		for _, s := range sums {
			if s.N > 0 {
				f.stats.Rows[i].Metrics = append(f.stats.Rows[i].Metrics, s)
			}
		}
	}
	slices.SortFunc(f.stats.Rows, func(a, b SampleCondition) int {
		return cmp.Or(cmp.Compare(a.Ordinal, b.Ordinal), cmp.Compare(a.Condition, b.Condition))
	})
}
