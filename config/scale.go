package config

import "slices"

// Scale is how a metric's values read: it decides how a judge is asked for
// them, how a confidence interval is clipped, which chart draws them and how
// they count towards quality.
type Scale int

// The scales of assay's metrics.
const (
	ScaleLikert Scale = iota // integers 1–5 (rubric)
	ScaleUnit                // any number in 0–1 (arbiter)
	ScalePass                // 0 or 1 (exact_match, numeric_match, code_execution)
)

// Scales lists every scale.
var Scales = []Scale{ScaleLikert, ScaleUnit, ScalePass}

func (s Scale) String() string {
	return [...]string{"1–5", "0–1", "pass/fail"}[s]
}

// Bounds are the least and greatest values of the scale: no mean can leave them.
func (s Scale) Bounds() (lo, hi float64) {
	if s == ScaleLikert {
		return 1, 5
	}
	return 0, 1
}

// Unit rescales a value of the scale to 0–1, so that metrics of different
// scales can be averaged into one quality figure.
func (s Scale) Unit(v float64) float64 {
	lo, hi := s.Bounds()
	return (v - lo) / (hi - lo)
}

// Integral reports whether the scale's values are whole numbers.
func (s Scale) Integral() bool { return s != ScaleUnit }

// Scale is the scale of every metric e gives; false for an evaluator assay
// does not know.
func (e Evaluator) Scale() (Scale, bool) {
	switch e {
	case EvalRubric:
		return ScaleLikert, true
	case EvalArbiter:
		return ScaleUnit, true
	case EvalExactMatch, EvalNumericMatch, EvalCodeExecution:
		return ScalePass, true
	}
	if IsAssertion(e) {
		return ScalePass, true
	}
	return 0, false
}

// metricsOf are the metrics of each evaluator in the order its protocol
// gives them: the order a report shows them in.
var metricsOf = map[Evaluator][]string{
	EvalRubric:        {"factual_adherence", "completeness", "helpfulness_and_clarity"},
	EvalArbiter:       {"semantic", "factuality", "overall"},
	EvalExactMatch:    {"exact_match"},
	EvalNumericMatch:  {"numeric_match"},
	EvalCodeExecution: {"code_execution"},
}

// Metrics are the names of the metrics e gives, in its order.
func (e Evaluator) Metrics() []string { return slices.Clone(metricsOf[e]) }
