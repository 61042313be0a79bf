package config

import (
	"fmt"
	"slices"
	"strings"
)

// Stop is a run's stopping rule: the run takes its samples in a seeded
// random order, whole samples at a time, and stops once the answer is
// known — every pair of conditions decided on a metric, or every
// condition's interval narrow enough — by confidence sequences, which stay
// valid however often they are looked at. The plan is the most it does.
type Stop struct {
	// When is "decided" (every pair of conditions: the difference's
	// interval excludes 0, or lies within ±Margin) or "precise" (every
	// condition's interval at most ±HalfWidth).
	When   string `yaml:"when" json:"when"`
	Metric string `yaml:"metric" json:"metric"` // the metric's name, as the report shows it
	// Alpha is the chance of a wrong decision, for the rule as a whole
	// (shared among the pairs or conditions); 0: DefaultStopAlpha.
	Alpha float64 `yaml:"alpha" json:"alpha,omitempty"`
	// Margin, in the metric's units: a pair whose difference lies within
	// ±Margin is decided as "no difference". 0: only a difference decides.
	Margin float64 `yaml:"margin" json:"margin,omitempty"`
	// HalfWidth, in the metric's units: how narrow each condition's
	// interval must be for "precise".
	HalfWidth float64 `yaml:"half_width" json:"half_width,omitempty"`
	// MinSamples is the fewest samples before a stop; 0: DefaultStopMinSamples.
	MinSamples int `yaml:"min_samples" json:"min_samples,omitempty"`
	// Seed orders the samples; 0 is a seed like another.
	Seed int `yaml:"seed" json:"seed,omitempty"`
}

// The stopping rule's words and defaults.
const (
	StopDecided           = "decided"
	StopPrecise           = "precise"
	DefaultStopAlpha      = 0.05
	DefaultStopMinSamples = 30
)

// Level is the rule's α.
func (s *Stop) Level() float64 {
	if s.Alpha == 0 {
		return DefaultStopAlpha
	}
	return s.Alpha
}

// Least is the fewest samples before the run may stop.
func (s *Stop) Least() int {
	if s.MinSamples == 0 {
		return DefaultStopMinSamples
	}
	return s.MinSamples
}

// stop checks the rule's own settings; whether the run gives its metric
// is known once its evaluators are (CheckStopMetric).
func (k *checker) stop(s *Stop) {
	if s == nil {
		return
	}
	switch s.When {
	case StopDecided, StopPrecise:
	default:
		k.fail("stop.when", "want %q or %q (got %q)", StopDecided, StopPrecise, s.When)
	}
	if s.Metric == "" {
		k.fail("stop.metric", "name the metric the rule watches (such as correctness, exact_match, completeness)")
	}
	if s.Alpha < 0 || s.Alpha > 0.5 {
		k.fail("stop.alpha", "must be above 0 and at most 0.5, got %v", s.Alpha)
	}
	if s.Margin < 0 {
		k.fail("stop.margin", "must be at least 0, got %v", s.Margin)
	}
	if s.HalfWidth < 0 || (s.When == StopPrecise && s.HalfWidth == 0) {
		k.fail("stop.half_width", "a precise rule needs a half-width above 0 (such as 0.03), got %v", s.HalfWidth)
	}
	if s.MinSamples < 0 {
		k.fail("stop.min_samples", "must be at least 1 (0 for %d), got %d", DefaultStopMinSamples, s.MinSamples)
	}
}

// MetricRef is a metric a run gives: its evaluator, name and scale.
type MetricRef struct {
	Evaluator string
	Name      string
	Scale     Scale
}

// GivenMetrics are the metrics a config whose evaluators are chosen gives,
// in its evaluators' order.
func (c *Config) GivenMetrics() []MetricRef {
	var out []MetricRef
	for _, ev := range c.Evaluators {
		if name, ok := ev.Rubric(); ok {
			if r, ok := c.RubricNamed(name); ok {
				for _, m := range r.Metrics {
					if sc, ok := m.ScaleOf(); ok {
						out = append(out, MetricRef{name, m.Name, sc})
					}
				}
			}
			continue
		}
		sc, _ := ev.Scale()
		for _, m := range ev.Metrics() {
			out = append(out, MetricRef{string(ev), m, sc})
		}
	}
	for _, a := range c.Assertions {
		out = append(out, MetricRef{a.Name, a.Name, ScalePass})
	}
	return out
}

// StopMetric is the metric the stopping rule watches, among those c gives.
func (c *Config) StopMetric() (MetricRef, error) {
	given := c.GivenMetrics()
	i := slices.IndexFunc(given, func(m MetricRef) bool { return m.Name == c.Stop.Metric })
	if i < 0 {
		var names []string
		for _, m := range given {
			names = append(names, m.Name)
		}
		return MetricRef{}, &FieldError{Key: "stop.metric", Err: fmt.Errorf("no evaluator of this run gives %q (it gives %s)",
			c.Stop.Metric, strings.Join(names, ", "))}
	}
	return given[i], nil
}

// Describe says the rule in words, of metric: "stop once every pair of
// conditions is decided on exact_match (α = 0.05), after at least 20
// samples".
func (r Stop) Describe(metric string) string {
	var text string
	switch r.When {
	case StopDecided:
		text = fmt.Sprintf("stop once every pair of conditions is decided on %s (α = %g", metric, r.Level())
		if r.Margin > 0 {
			text += fmt.Sprintf(", no difference within ±%g", r.Margin)
		}
	default:
		text = fmt.Sprintf("stop once every condition's %s is known within ±%g (α = %g", metric, r.HalfWidth, r.Level())
	}
	return text + fmt.Sprintf("), after at least %d samples", r.Least())
}

// StopWarning says that the rule cannot stop a run over samples samples
// early: it looks only after min_samples, which the dataset does not pass;
// "" when it can.
func (c *Config) StopWarning(samples int) string {
	if c.Stop == nil || c.Stop.Least() < samples {
		return ""
	}
	return fmt.Sprintf("stop.min_samples is %d and the dataset has %d samples: the rule looks only after min_samples, so it cannot stop this run early", c.Stop.Least(), samples)
}
