package store

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
)

// SampleKey names one sample (its row id) under one condition of a run.
type SampleKey struct {
	SampleID  int64
	Condition string
}

// MetricName names a metric of an evaluator.
type MetricName struct {
	Evaluator string
	Metric    string
}

// MetricStat is one metric's scores for one sample under one condition.
type MetricStat struct {
	MetricName
	Mean float64
	Std  float64 // sample standard deviation over the scores (repetitions); 0 with one score
	N    int
}

// SampleCondition is one sample under one condition of a run, its repetitions folded together.
type SampleCondition struct {
	SampleKey
	Ordinal     int
	Name        string // the dataset's own id of the sample
	Results     int
	Errors      int // results that ended in an agent error
	JudgeErrors int // judgements that ended in an error
	Claims      int // unverified claims over every judgement
	Metrics     []MetricStat
}

// SampleStats are a run's results folded per sample and condition.
type SampleStats struct {
	Metrics []MetricName      // in the order the evaluators first gave them
	Rows    []SampleCondition // in dataset order, then by condition name
}

// SampleStats folds a run's results, judgements and scores per sample and
// condition, in SQL: three grouped scans, however many samples the run has.
func (db *DB) SampleStats(ctx context.Context, runID int64) (*SampleStats, error) {
	st := &SampleStats{}
	index := map[SampleKey]int{}
	if err := db.sampleResultCounts(ctx, runID, st, index); err != nil {
		return nil, err
	}
	if err := db.sampleScoreStats(ctx, runID, st, index); err != nil {
		return nil, err
	}
	return st, nil
}

// sampleResultCounts adds one row per (sample, condition) with its result,
// error and unverified-claim counts.
func (db *DB) sampleResultCounts(ctx context.Context, runID int64, st *SampleStats, index map[SampleKey]int) error {
	rows, err := db.read.QueryContext(ctx, `SELECT r.sample_id, r.condition, sm.ordinal, sm.sample_id, count(*),
		sum(r.error != ''), coalesce(sum(j.errs), 0), coalesce(sum(j.claims), 0)
		FROM results r JOIN samples sm ON sm.id = r.sample_id
		LEFT JOIN (SELECT result_id, sum(error != '') errs, sum(json_array_length(unverified_claims)) claims
			FROM judgements WHERE run_id = ? GROUP BY result_id) j ON j.result_id = r.id
		WHERE r.run_id = ? GROUP BY r.sample_id, r.condition ORDER BY sm.ordinal, r.condition`, runID, runID)
	if err != nil {
		return fmt.Errorf("sample stats: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var sc SampleCondition
		if err := rows.Scan(&sc.SampleID, &sc.Condition, &sc.Ordinal, &sc.Name, &sc.Results, &sc.Errors,
			&sc.JudgeErrors, &sc.Claims); err != nil {
			return fmt.Errorf("sample stats: %w", err)
		}
		index[sc.SampleKey] = len(st.Rows)
		st.Rows = append(st.Rows, sc)
	}
	return rows.Err()
}

// sampleScoreStats adds each metric's mean and standard deviation to the rows.
func (db *DB) sampleScoreStats(ctx context.Context, runID int64, st *SampleStats, index map[SampleKey]int) error {
	rows, err := db.read.QueryContext(ctx, `SELECT r.sample_id, r.condition, j.evaluator, s.metric,
		count(*), avg(s.value), sum(s.value * s.value), min(s.id)
		FROM scores s JOIN judgements j ON j.id = s.judgement_id JOIN results r ON r.id = s.result_id
		WHERE s.run_id = ? GROUP BY r.sample_id, r.condition, j.evaluator, s.metric`, runID)
	if err != nil {
		return fmt.Errorf("sample scores: %w", err)
	}
	defer rows.Close()
	first := map[MetricName]int64{}
	for rows.Next() {
		var k SampleKey
		var m MetricStat
		var sumSq float64
		var minID int64
		if err := rows.Scan(&k.SampleID, &k.Condition, &m.Evaluator, &m.Metric, &m.N, &m.Mean, &sumSq, &minID); err != nil {
			return fmt.Errorf("sample scores: %w", err)
		}
		if m.N > 1 {
			m.Std = math.Sqrt(max(0, (sumSq-float64(m.N)*m.Mean*m.Mean)/float64(m.N-1)))
		}
		if id, ok := first[m.MetricName]; !ok || minID < id {
			first[m.MetricName] = minID
		}
		if i, ok := index[k]; ok {
			st.Rows[i].Metrics = append(st.Rows[i].Metrics, m)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sample scores: %w", err)
	}
	st.Metrics = metricsInOrder(first)
	return nil
}

// metricsInOrder sorts metrics by the first score each received, which is
// the order a run's evaluators and each judge's rubric give them.
func metricsInOrder(first map[MetricName]int64) []MetricName {
	out := make([]MetricName, 0, len(first))
	for m := range first {
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b MetricName) int { return cmp.Compare(first[a], first[b]) })
	return out
}

// SampleMatches are what a text search found in a run.
type SampleMatches struct {
	Samples   map[int64]bool     // samples whose input or reference holds the text
	Responses map[SampleKey]bool // samples whose response under a condition holds it
}

// SearchSamples finds text, ignoring ASCII case, in the input and reference of
// a run's samples and in the run's responses.
func (db *DB) SearchSamples(ctx context.Context, runID, datasetID int64, text string) (*SampleMatches, error) {
	pattern := "%" + likeEscaper.Replace(text) + "%"
	m := &SampleMatches{Samples: map[int64]bool{}, Responses: map[SampleKey]bool{}}
	rows, err := db.read.QueryContext(ctx, `SELECT id FROM samples WHERE dataset_id = ?1
		AND (input LIKE ?2 ESCAPE '\' OR reference LIKE ?2 ESCAPE '\')`, datasetID, pattern)
	if err != nil {
		return nil, fmt.Errorf("search samples: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("search samples: %w", err)
		}
		m.Samples[id] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search samples: %w", err)
	}
	return m, db.searchResponses(ctx, runID, pattern, m)
}

var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

func (db *DB) searchResponses(ctx context.Context, runID int64, pattern string, m *SampleMatches) error {
	rows, err := db.read.QueryContext(ctx, `SELECT DISTINCT sample_id, condition FROM results
		WHERE run_id = ? AND response LIKE ? ESCAPE '\'`, runID, pattern)
	if err != nil {
		return fmt.Errorf("search responses: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var k SampleKey
		if err := rows.Scan(&k.SampleID, &k.Condition); err != nil {
			return fmt.Errorf("search responses: %w", err)
		}
		m.Responses[k] = true
	}
	return rows.Err()
}

// SampleHead is the beginning of a sample's texts, for tables.
type SampleHead struct {
	Input     string
	Reference string
}

// SampleHeads returns the first n characters (n+1 when there are more) of the
// input and reference of the samples with the given row ids.
func (db *DB) SampleHeads(ctx context.Context, ids []int64, n int) (map[int64]SampleHead, error) {
	out := make(map[int64]SampleHead, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	args := []any{n + 1}
	for _, id := range ids {
		args = append(args, id)
	}
	rows, err := db.read.QueryContext(ctx, `SELECT id, substr(input, 1, ?1), substr(reference, 1, ?1) FROM samples
		WHERE id IN (`+strings.Repeat("?, ", len(ids)-1)+`?)`, args...)
	if err != nil {
		return nil, fmt.Errorf("sample heads: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var h SampleHead
		if err := rows.Scan(&id, &h.Input, &h.Reference); err != nil {
			return nil, fmt.Errorf("sample heads: %w", err)
		}
		out[id] = h
	}
	return out, rows.Err()
}

// SampleNeighbours returns the row ids of the samples before and after the
// one at ordinal in a dataset's order; 0 where there is none.
func (db *DB) SampleNeighbours(ctx context.Context, datasetID int64, ordinal int) (prev, next int64, err error) {
	err = db.read.QueryRowContext(ctx, `SELECT
		coalesce((SELECT id FROM samples WHERE dataset_id = ?1 AND ordinal < ?2 ORDER BY ordinal DESC LIMIT 1), 0),
		coalesce((SELECT id FROM samples WHERE dataset_id = ?1 AND ordinal > ?2 ORDER BY ordinal LIMIT 1), 0)`,
		datasetID, ordinal).Scan(&prev, &next)
	if err != nil {
		return 0, 0, fmt.Errorf("sample neighbours: %w", err)
	}
	return prev, next, nil
}
