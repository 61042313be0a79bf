package gate

import (
	"fmt"
	"math"
	"slices"

	"assay/report"
)

// judgeAgreement judges a gate on how the judge agrees with people on a
// metric, over every condition's reviews.
func judgeAgreement(g Gate, reviews *report.Reviews) Result {
	r := Result{Gate: g.Text, Metric: g.name(), Bound: g.Of + "." + g.Figure, Op: g.Op, Threshold: g.Threshold}
	var list []report.Agreement
	if reviews != nil {
		list = reviews.Agreement
	}
	i := slices.IndexFunc(list, func(a report.Agreement) bool {
		return g.matches(report.Metric{Evaluator: a.Evaluator, Name: a.Name})
	})
	if i < 0 {
		r.Message = fmt.Sprintf("%s: nobody reviewed a score of it", g.name())
		return r
	}
	a := list[i]
	r.Metric, r.N = metricName(report.Metric{Evaluator: a.Evaluator, Name: a.Name}), a.Reviewed
	what := "mean absolute difference from people"
	r.Value = a.MAD
	if g.Figure == "kappa" {
		if a.Kappa == nil {
			r.Message = fmt.Sprintf("%s: no kappa with people over %d reviewed scores (too few, or no spread)", r.Metric, a.Reviewed)
			return r
		}
		what, r.Value = "kappa with people", *a.Kappa
	}
	r.Held = compare(r.Value, g.Op, g.Threshold)
	r.Message = fmt.Sprintf("%s: the judge's %s, %s, %s %s (%d scores reviewed)", r.Metric, what, num(r.Value), Says(g.Op, r.Held), num(g.Threshold), a.Reviewed)
	return r
}

// judgePPI judges a gate on how far people's reviews move the judge's mean
// of a metric under a condition, either way.
func judgePPI(g Gate, c report.ConditionSummary) Result {
	r := Result{Gate: g.Text, Condition: c.Name, Metric: g.name(), Bound: g.Of + "." + g.Figure, Op: g.Op, Threshold: g.Threshold}
	i := slices.IndexFunc(c.Metrics, func(m report.MetricSummary) bool {
		return g.matches(report.Metric{Evaluator: m.Evaluator, Name: m.Name})
	})
	if i < 0 || c.Metrics[i].PPI == nil {
		r.Message = fmt.Sprintf("%s: no mean of %s corrected by reviews (it needs %d answers reviewed whole at the start of a review order)",
			c.Name, g.name(), report.MinPPIReviews)
		return r
	}
	m := c.Metrics[i]
	p := m.PPI
	r.Metric, r.N = metricName(report.Metric{Evaluator: m.Evaluator, Name: m.Name}), p.Reviewed
	r.Value = math.Abs(p.Shift)
	r.Held = compare(r.Value, g.Op, g.Threshold)
	r.Message = fmt.Sprintf("%s: reviews move the judge's mean of %s from %s to %s (95%% CI [%s, %s]), by %s, which %s %s (%d of %d answers reviewed)",
		c.Name, r.Metric, num(p.Mean-p.Shift), num(p.Mean), num(p.CI95[0]), num(p.CI95[1]), num(r.Value), Says(g.Op, r.Held), num(g.Threshold), p.Reviewed, p.Of)
	return r
}
