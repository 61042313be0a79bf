package report

import (
	"cmp"
	"slices"

	"assay/config"
)

// Metric is one named number an evaluator gives, with its scale: defined
// once here, and used by the summary, the charts, the paired comparison,
// the samples table and the exports alike.
type Metric struct {
	Evaluator string       `json:"evaluator"`
	Name      string       `json:"name"`
	Scale     config.Scale `json:"-"`
}

// Label names a metric where it stands alone: its name, after its
// evaluator's when the two differ ("rubric · completeness").
func (m Metric) Label() string {
	if m.Name == m.Evaluator {
		return m.Name
	}
	return m.Evaluator + " · " + m.Name
}

// Digits is how many decimals its means are shown with: two for 1–5
// scores, three for 0–1 values and pass rates.
func (m Metric) Digits() int {
	if m.Scale == config.ScaleLikert {
		return 2
	}
	return 3
}

// Order sorts metrics as a report shows them: by the run's evaluator order,
// then in the order each evaluator's protocol gives its metrics; metrics an
// evaluator does not list keep the order they came in, after those it does.
func Order(evaluators []config.Evaluator, metrics []Metric) {
	rank := map[string]int{}
	for i, ev := range evaluators {
		rank[string(ev)] = i
	}
	evRank := func(m Metric) int {
		if r, ok := rank[m.Evaluator]; ok {
			return r
		}
		return len(evaluators)
	}
	nameRank := func(m Metric) int {
		if i := slices.Index(config.Evaluator(m.Evaluator).Metrics(), m.Name); i >= 0 {
			return i
		}
		return 1 << 20
	}
	slices.SortStableFunc(metrics, func(a, b Metric) int {
		return cmp.Or(cmp.Compare(evRank(a), evRank(b)), cmp.Compare(nameRank(a), nameRank(b)))
	})
}

// scaleOf is, for a metric neither assay nor the run's config knows, the
// narrowest scale that holds its values.
func scaleOf(values func(yield func(float64) bool)) config.Scale {
	pass, likert := true, true
	for v := range values {
		pass = pass && (v == 0 || v == 1)
		likert = likert && v >= 1 && v <= 5 && v == float64(int(v))
	}
	switch {
	case pass:
		return config.ScalePass
	case likert:
		return config.ScaleLikert
	}
	return config.ScaleUnit
}
