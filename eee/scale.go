package eee

import (
	"fmt"
	"math"

	"assay/config"
)

// largestScore bounds the scores of a metric whose scale assay does not
// know: a value past it is no score, and would make a run's sums infinite.
const largestScore = 1e9

// outOfScale says why v cannot be a score of a metric evaluator gives: it
// lies outside the metric's scale (1–5, 0–1, pass 0/1), or, for a metric of
// a scale assay does not know, past ±largestScore; "" when it can be one.
func outOfScale(evaluator string, v float64) string {
	if scale, ok := config.Evaluator(evaluator).Scale(); ok {
		if lo, hi := scale.Bounds(); v < lo || v > hi {
			return fmt.Sprintf("outside its metric's scale (%s)", scale)
		}
		return ""
	}
	if math.IsNaN(v) || math.Abs(v) > largestScore {
		return fmt.Sprintf("past ±%g, too large for a score", float64(largestScore))
	}
	return ""
}

// outOfScale is the package's outOfScale for a metric of the official
// schema, whose bounds (min_score, max_score) hold where assay does not
// know its scale.
func (m officialMetric) outOfScale(evaluator string, v float64) string {
	if _, known := config.Evaluator(evaluator).Scale(); known || m.min == nil && m.max == nil {
		return outOfScale(evaluator, v)
	}
	if m.min != nil && v < *m.min || m.max != nil && v > *m.max {
		return fmt.Sprintf("outside its metric's min_score and max_score (%s–%s)", bound(m.min), bound(m.max))
	}
	return ""
}

func bound(v *float64) string {
	if v == nil {
		return "none"
	}
	return fmt.Sprintf("%g", *v)
}
