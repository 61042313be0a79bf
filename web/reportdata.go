package web

import (
	"context"
	"slices"

	"assay/runner"
	"assay/runner/config"
	"assay/runner/stats"
	"assay/store"
)

// scale is how a metric's values read: it decides its chart and how it
// counts towards quality.
type scale int

// The scales of assay's evaluators.
const (
	scaleLikert scale = iota // integers 1–5 (rubric)
	scaleUnit                // any number in 0–1 (arbiter)
	scalePass                // 0 or 1 (exact_match, numeric_match, code_execution)
)

func (s scale) String() string {
	return [...]string{"1–5", "0–1", "pass/fail"}[s]
}

// unit rescales a value of the scale to 0–1, so that metrics of different
// scales can be averaged into one quality figure.
func (s scale) unit(v float64) float64 {
	if s == scaleLikert {
		return (v - 1) / 4
	}
	return v
}

// bounds are the least and greatest values of the scale.
func (s scale) bounds() (lo, hi float64) {
	if s == scaleLikert {
		return 1, 5
	}
	return 0, 1
}

// metricInfo is one metric of a run: which evaluator gives it and its scale.
type metricInfo struct {
	Evaluator string
	Name      string
	Scale     scale
}

// sampleScores are one sample's scores for one metric under one condition:
// its repetitions (and judge repetitions).
type sampleScores struct {
	ID     int64 // the sample's row id
	Values []float64
}

// report is a run's report computed from its stored scores: what every view
// of it (page, fragment, export) draws on.
type report struct {
	sc         *reportScope
	summary    *runner.Summary
	conditions []string // in the run's order
	metrics    []metricInfo
	// samples[metric][condition] lists the samples with scores, by row id.
	samples []map[string][]sampleScores
}

// buildReport reads a run's scores and totals and computes its report.
func buildReport(ctx context.Context, db *store.DB, sc *reportScope) (*report, error) {
	data, err := db.ReportData(ctx, sc.Run.ID)
	if err != nil {
		return nil, err
	}
	r := &report{sc: sc, summary: runner.SummaryOf(sc.Run, sc.Dataset, sc.Config.Evaluators, data.Conditions, data.Scores)}
	for _, c := range sc.Run.Conditions {
		r.conditions = append(r.conditions, c.Name)
	}
	index := map[[2]string]int{}
	for _, c := range r.summary.Conditions {
		for _, m := range c.Metrics {
			key := [2]string{m.Evaluator, m.Name}
			if _, ok := index[key]; !ok {
				index[key] = len(r.metrics)
				r.metrics = append(r.metrics, metricInfo{Evaluator: m.Evaluator, Name: m.Name})
				r.samples = append(r.samples, map[string][]sampleScores{})
			}
		}
	}
	r.groupScores(data.Scores, index)
	for i := range r.metrics {
		r.metrics[i].Scale = scaleOf(r.metrics[i].Evaluator, r.samples[i])
	}
	return r, nil
}

// groupScores folds scores, ordered by condition, metric and sample, into
// per-sample groups.
func (r *report) groupScores(scores []store.ScoreRow, index map[[2]string]int) {
	for _, s := range scores {
		i := index[[2]string{s.Evaluator, s.Metric}]
		groups := r.samples[i][s.Condition]
		if n := len(groups); n == 0 || groups[n-1].ID != s.SampleID {
			groups = append(groups, sampleScores{ID: s.SampleID})
		}
		last := &groups[len(groups)-1]
		last.Values = append(last.Values, s.Value)
		r.samples[i][s.Condition] = groups
	}
}

// scaleOf names a metric's scale from its evaluator, or from its values for
// an evaluator assay does not know.
func scaleOf(evaluator string, byCondition map[string][]sampleScores) scale {
	switch config.Evaluator(evaluator) {
	case config.EvalRubric:
		return scaleLikert
	case config.EvalArbiter:
		return scaleUnit
	case config.EvalExactMatch, config.EvalNumericMatch, config.EvalCodeExecution:
		return scalePass
	}
	pass, likert := true, true
	for _, groups := range byCondition {
		for _, g := range groups {
			for _, v := range g.Values {
				pass = pass && (v == 0 || v == 1)
				likert = likert && v >= 1 && v <= 5 && v == float64(int(v))
			}
		}
	}
	switch {
	case pass:
		return scalePass
	case likert:
		return scaleLikert
	}
	return scaleUnit
}

// means returns each sample's mean score for metric m under condition c, by row id.
func (r *report) means(m int, c string) map[int64]float64 {
	out := map[int64]float64{}
	for _, g := range r.samples[m][c] {
		out[g.ID] = mean(g.Values)
	}
	return out
}

// quality is a condition's mean of its metric means, each rescaled to 0–1;
// ok is false when it has no score.
func (r *report) quality(cs runner.ConditionSummary) (q float64, ok bool) {
	var sum float64
	for _, m := range cs.Metrics {
		sum += r.metrics[r.metricIndex(m.Evaluator, m.Name)].Scale.unit(m.Mean)
	}
	if len(cs.Metrics) == 0 {
		return 0, false
	}
	return sum / float64(len(cs.Metrics)), true
}

func (r *report) metricIndex(evaluator, name string) int {
	return slices.IndexFunc(r.metrics, func(m metricInfo) bool { return m.Evaluator == evaluator && m.Name == name })
}

// hasCondition reports whether the run has a condition of that name.
func (r *report) hasCondition(name string) bool { return slices.Contains(r.conditions, name) }

func mean(v []float64) float64 {
	m, _ := stats.Describe(v)
	return m
}
