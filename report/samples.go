package report

import (
	"context"
	"slices"

	"assay/config"
	"assay/stats"
	"assay/store"
	"assay/tally"
)

// SampleMetric is one metric's scores for one sample under one condition.
type SampleMetric struct {
	Mean float64
	Std  float64 // sample standard deviation over the scores (repetitions); 0 with one score
	N    int     // 0: the metric has no score here
}

// SampleRow is one sample under one condition of a run, its repetitions
// folded together: a row of the samples table.
type SampleRow struct {
	tally.SampleCounts
	Metrics []SampleMetric // one per SampleTable.Metrics, in its order, N 0 where a metric has no score
}

// Scored reports whether the row has a score of any metric.
func (r *SampleRow) Scored() bool {
	for _, m := range r.Metrics {
		if m.N > 0 {
			return true
		}
	}
	return false
}

// SampleTable is a run's results per sample and condition.
type SampleTable struct {
	Metrics []Metric    // in report order
	Rows    []SampleRow // in dataset order, then by condition name
}

// LoadSamples reads a run's results folded per sample and condition.
func LoadSamples(ctx context.Context, db *store.DB, runID int64, evaluators []config.Evaluator) (*SampleTable, error) {
	st, err := tally.Of(db).SampleStats(ctx, runID)
	if err != nil {
		return nil, err
	}
	return sampleTable(st, evaluators), nil
}

func sampleTable(st *tally.SampleStats, evaluators []config.Evaluator) *SampleTable {
	t := &SampleTable{Rows: make([]SampleRow, len(st.Rows))}
	for _, m := range st.Metrics {
		t.Metrics = append(t.Metrics, metricOf(m))
	}
	Order(evaluators, t.Metrics)
	at := make([]int, len(st.Metrics)) // where each of the store's metrics stands in the table
	for i, m := range st.Metrics {
		at[i] = slices.Index(t.Metrics, metricOf(m))
	}
	// Every row's metrics in one array: a table of 50,000 rows is kept
	// by the server, and is read by every filter and sort.
	all := make([]SampleMetric, len(st.Rows)*len(t.Metrics))
	for i, r := range st.Rows {
		row := SampleRow{SampleCounts: r.SampleCounts, Metrics: all[i*len(t.Metrics) : (i+1)*len(t.Metrics) : (i+1)*len(t.Metrics)]}
		k := 0
		for _, s := range r.Metrics { // in the store's order of metrics
			for st.Metrics[k] != s.MetricName {
				k++
			}
			mean, std := stats.FromSums(s.N, s.Sum, s.SumSq)
			row.Metrics[at[k]] = SampleMetric{Mean: mean, Std: std, N: s.N}
		}
		t.Rows[i] = row
	}
	return t
}

// metricOf is the metric a stored score names. A metric of an evaluator
// assay does not know reads as 0–1 here, where only its name is shown.
func metricOf(m tally.MetricName) Metric {
	sc, ok := config.Evaluator(m.Evaluator).Scale()
	if !ok {
		sc = config.ScaleUnit
	}
	return Metric{Evaluator: m.Evaluator, Name: m.Metric, Scale: sc}
}
