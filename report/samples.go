package report

import (
	"context"

	"assay/runner/config"
	"assay/runner/stats"
	"assay/store"
)

// SampleMetric is one metric's scores for one sample under one condition.
type SampleMetric struct {
	Metric
	Mean float64
	Std  float64 // sample standard deviation over the scores (repetitions); 0 with one score
	N    int
}

// SampleRow is one sample under one condition of a run, its repetitions
// folded together: a row of the samples table.
type SampleRow struct {
	store.SampleCounts
	Metrics []SampleMetric // in the order of SampleTable.Metrics; a metric without a score is left out
}

// SampleTable is a run's results per sample and condition.
type SampleTable struct {
	Metrics []Metric    // in report order
	Rows    []SampleRow // in dataset order, then by condition name
}

// LoadSamples reads a run's results folded per sample and condition.
func LoadSamples(ctx context.Context, db *store.DB, runID int64, evaluators []config.Evaluator) (*SampleTable, error) {
	st, err := db.SampleStats(ctx, runID)
	if err != nil {
		return nil, err
	}
	return sampleTable(st, evaluators), nil
}

func sampleTable(st *store.SampleStats, evaluators []config.Evaluator) *SampleTable {
	t := &SampleTable{Rows: make([]SampleRow, len(st.Rows))}
	for _, m := range st.Metrics {
		t.Metrics = append(t.Metrics, metricOf(m))
	}
	Order(evaluators, t.Metrics)
	for i, r := range st.Rows {
		row := SampleRow{SampleCounts: r.SampleCounts}
		for _, m := range t.Metrics {
			for _, s := range r.Metrics {
				if metricOf(s.MetricName) == m {
					mean, std := stats.FromSums(s.N, s.Sum, s.SumSq)
					row.Metrics = append(row.Metrics, SampleMetric{Metric: m, Mean: mean, Std: std, N: s.N})
				}
			}
		}
		t.Rows[i] = row
	}
	return t
}

// metricOf is the metric a stored score names. A metric of an evaluator
// assay does not know reads as 0–1 here, where only its name is shown.
func metricOf(m store.MetricName) Metric {
	sc, ok := config.Evaluator(m.Evaluator).Scale()
	if !ok {
		sc = config.ScaleUnit
	}
	return Metric{Evaluator: m.Evaluator, Name: m.Metric, Scale: sc}
}
