package config

import (
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Rubric is a judge's rubric written in a run file under rubrics: metrics
// of the user's own, each with a description, a scale and what each level
// means. An evaluators item {judge: NAME} scores answers with it; its
// metrics are reported under the evaluator NAME.
type Rubric struct {
	Name             string         `yaml:"-" json:"name"`
	Metrics          []RubricMetric `yaml:"metrics" json:"metrics"`
	UnverifiedClaims bool           `yaml:"unverified_claims" json:"unverified_claims"` // the judge lists claims the golden answer does not support
}

// RubricMetric is one metric of a rubric.
type RubricMetric struct {
	Name        string            `yaml:"name" json:"name"`
	Description string            `yaml:"description" json:"description"`
	Scale       string            `yaml:"scale" json:"scale"`             // "1-5", "0-1" or "pass"
	Levels      map[string]string `yaml:"levels" json:"levels,omitempty"` // level → what it means: "5": "…", or "pass"/"fail"
	// PassAt makes a 1–5 or 0–1 metric pass/fail for the consistency
	// figures (pass^k, flip rate, Fleiss' κ): a score at or above passes.
	PassAt *float64 `yaml:"pass_at" json:"pass_at,omitempty"`
}

// PassAt is the score at or above which a rubric metric of the run passes,
// when its rubric gives one.
func (c *Config) PassAt(evaluator, metric string) (float64, bool) {
	r, ok := c.RubricNamed(evaluator)
	if !ok {
		return 0, false
	}
	for _, m := range r.Metrics {
		if m.Name == metric && m.PassAt != nil {
			return *m.PassAt, true
		}
	}
	return 0, false
}

// judgePrefix marks an evaluator that is a custom rubric: "judge:NAME".
const judgePrefix = "judge:"

// JudgeWith is the evaluator that scores with the rubric called name.
func JudgeWith(name string) Evaluator { return Evaluator(judgePrefix + name) }

// Rubric is the name of the custom rubric e scores with, if it is one.
func (e Evaluator) Rubric() (string, bool) { return strings.CutPrefix(string(e), judgePrefix) }

// Label is the evaluator's name as its metrics are reported: a custom
// rubric's name, else the evaluator's own.
func (e Evaluator) Label() string {
	if name, ok := e.Rubric(); ok {
		return name
	}
	return string(e)
}

// RubricNamed returns the run's rubric of that name.
func (c *Config) RubricNamed(name string) (*Rubric, bool) {
	if c == nil {
		return nil, false
	}
	for i := range c.Rubrics {
		if c.Rubrics[i].Name == name {
			return &c.Rubrics[i], true
		}
	}
	return nil, false
}

// ScaleOf is the scale of a rubric metric.
func (m RubricMetric) ScaleOf() (Scale, bool) {
	switch strings.ReplaceAll(m.Scale, "–", "-") {
	case "1-5":
		return ScaleLikert, true
	case "0-1":
		return ScaleUnit, true
	case "pass":
		return ScalePass, true
	}
	return 0, false
}

// MetricScale is the scale of a metric by the evaluator its scores carry:
// a built-in evaluator's, or that of a rubric of this run (its name). False
// when neither knows it.
func (c *Config) MetricScale(evaluator, metric string) (Scale, bool) {
	if sc, ok := Evaluator(evaluator).Scale(); ok {
		return sc, true
	}
	r, ok := c.RubricNamed(evaluator)
	if !ok {
		return 0, false
	}
	for _, m := range r.Metrics {
		if m.Name == metric {
			return m.ScaleOf()
		}
	}
	return 0, false
}

var metricName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// rubrics checks the rubrics and the evaluators that name them.
func (k *checker) rubrics(c *Config) {
	for _, r := range c.Rubrics {
		key := "rubrics." + r.Name
		if Evaluator(r.Name).Valid() || IsAssertion(Evaluator(r.Name)) {
			k.fail(key, "the name of a built-in evaluator: choose another")
		}
		k.rubric(r, key+".")
	}
	for i, ev := range c.Evaluators {
		if name, ok := ev.Rubric(); ok {
			if _, found := c.RubricNamed(name); !found {
				k.fail(fmt.Sprintf("evaluators[%d].judge", i), "no rubric %q under rubrics, nor saved on the Rubrics page", name)
			}
		}
	}
}

// rubric checks one rubric's metrics; prefix starts their keys.
func (k *checker) rubric(r Rubric, prefix string) {
	if len(r.Metrics) == 0 {
		k.fail(prefix+"metrics", "required: at least one metric")
	}
	seen := map[string]bool{}
	for i, m := range r.Metrics {
		mk := fmt.Sprintf("%smetrics[%d]", prefix, i)
		switch {
		case !metricName.MatchString(m.Name):
			k.fail(mk+".name", "want lower-case letters, digits and _, starting with a letter (got %q)", m.Name)
		case seen[m.Name]:
			k.fail(mk+".name", "%q twice", m.Name)
		case m.Name == "unverified_claims" || strings.HasSuffix(m.Name, "_reasoning"):
			k.fail(mk+".name", "%q is a name the judge's answer uses for itself", m.Name)
		}
		seen[m.Name] = true
		if strings.TrimSpace(m.Description) == "" {
			k.fail(mk+".description", "required: what the judge should look at")
		}
		sc, ok := m.ScaleOf()
		if !ok {
			k.fail(mk+".scale", "want \"1-5\", \"0-1\" or \"pass\" (got %q)", m.Scale)
			continue
		}
		for _, level := range slices.Sorted(maps.Keys(m.Levels)) {
			if !levelOf(sc, level) {
				k.fail(mk+".levels."+level, "not a level of the %s scale", sc)
			}
		}
		if m.PassAt != nil {
			lo, hi := sc.Bounds()
			switch {
			case sc == ScalePass:
				k.fail(mk+".pass_at", "a pass/fail metric passes by itself: leave pass_at out")
			case *m.PassAt <= lo || *m.PassAt > hi:
				k.fail(mk+".pass_at", "want a score above %v and at most %v on the %s scale (got %v)", lo, hi, sc, *m.PassAt)
			}
		}
	}
}

// rubricName is what a saved rubric may be called: it names an evaluator,
// a report's column and a page's address.
var rubricName = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,39}$`)

// ParseRubric reads a rubric as a run file writes it under rubrics.NAME —
// its metrics and unverified_claims — and checks it by the same rules. file
// names the text in messages, which give its lines.
func ParseRubric(name, source, file string) (*Rubric, error) {
	var errs []error
	if !rubricName.MatchString(name) {
		errs = append(errs, &FieldError{File: file, Key: "name", Err: fmt.Errorf("want up to 40 lower-case letters, digits, _ and -, starting with a letter (got %q)", name)})
	} else if Evaluator(name).Valid() || IsAssertion(Evaluator(name)) {
		errs = append(errs, &FieldError{File: file, Key: "name", Err: fmt.Errorf("%q is the name of a built-in evaluator: choose another", name)})
	}
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(source), &root); err != nil {
		return nil, joinSorted(append(errs, &FieldError{File: file, Err: err}))
	}
	r := &Rubric{Name: name}
	if len(root.Content) == 0 {
		return nil, joinSorted(append(errs, &FieldError{File: file, Key: "metrics", Err: fmt.Errorf("required: at least one metric")}))
	}
	d := &decoder{file: file, getenv: func(string) string { return "" }, lines: map[string]int{}, refs: map[string]ref{}}
	d.decode(root.Content[0], reflect.ValueOf(r).Elem(), "", true)
	errs = append(errs, d.errs...)
	if len(d.errs) == 0 {
		k := &checker{file: file, lines: d.lines}
		k.rubric(*r, "")
		errs = append(errs, k.errs...)
	}
	if len(errs) > 0 {
		return nil, joinSorted(errs)
	}
	return r, nil
}

// levelOf reports whether level names a level of sc: 1–5, 0 and 1 (or
// fail and pass), or a number in 0–1.
func levelOf(sc Scale, level string) bool {
	if sc == ScalePass && (level == "pass" || level == "fail") {
		return true
	}
	v, err := strconv.ParseFloat(level, 64)
	if err != nil {
		return false
	}
	lo, hi := sc.Bounds()
	return v >= lo && v <= hi && (!sc.Integral() || v == float64(int(v)))
}
