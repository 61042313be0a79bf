package gate

import (
	"fmt"
	"slices"

	"assay/config"
	"assay/report"
)

// DefaultMaxErrorRate is the share of a condition's tasks whose agent or
// judge calls may fail before a run is not taken as a result.
const DefaultMaxErrorRate = 0.1

// Health lists what makes a completed run no result to act on: a condition
// where an evaluator has no score at all, or where more than maxErrorRate of
// its tasks failed, judge errors counted. Each says which and how many.
// Empty for a healthy run. An evaluator the run judged no sample with (a
// judge sample rate of 0) is not expected to score.
func Health(r *report.Report, maxErrorRate float64) []string {
	var out []string
	// The evaluators the run was to score with, whether or not any did.
	var evaluators []string
	add := func(ev string) {
		if !slices.Contains(evaluators, ev) {
			evaluators = append(evaluators, ev)
		}
	}
	if r.Config != nil {
		for _, ev := range r.Config.Evaluators {
			add(ev.Label())
		}
		for _, a := range r.Config.Assertions {
			add(a.Kind)
		}
	}
	for _, m := range r.Metrics {
		add(m.Evaluator)
	}
	unjudged := r.Config != nil && r.Config.JudgeSampleRate == 0
	for _, c := range r.Summary.Conditions {
		if c.Results == 0 {
			continue
		}
		for _, ev := range evaluators {
			if unjudged && !deterministic(ev) {
				continue
			}
			if !slices.ContainsFunc(c.Metrics, func(m report.MetricSummary) bool { return m.Evaluator == ev }) {
				out = append(out, fmt.Sprintf("%s: %s has no score (%d results, %d agent and %d judge errors)", c.Name, ev, c.Results, c.Errors, c.JudgeErrors))
			}
		}
		failed := c.Errors + c.JudgeErrors
		if rate := float64(failed) / float64(c.Results); rate > maxErrorRate {
			out = append(out, fmt.Sprintf("%s: %d failed calls over %d tasks (%.0f%%, more than --max-error-rate %g): %d of the agent, %d of the judge",
				c.Name, failed, c.Results, 100*min(rate, 1), maxErrorRate, c.Errors, c.JudgeErrors))
		}
	}
	return out
}

// deterministic says whether an evaluator scores without a judge.
func deterministic(ev string) bool {
	e := config.Evaluator(ev)
	return e == config.EvalExactMatch || e == config.EvalNumericMatch || e == config.EvalCodeExecution || config.IsAssertion(e)
}
