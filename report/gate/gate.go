// Package gate decides whether a finished run may pass a CI pipeline: gates
// on a metric's mean or confidence bound, and regressions found by a paired
// comparison with a baseline run. It judges what package report computed and
// writes the outcome as JUnit XML and a markdown summary.
package gate

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"assay"
	"assay/config"
	"assay/report"
)

// Bound is the figure of a metric a gate compares.
type Bound string

// The figures a gate can compare.
const (
	BoundMean   Bound = ""        // the mean
	BoundCILow  Bound = "ci_low"  // the lower end of its 95% CI
	BoundCIHigh Bound = "ci_high" // the upper end
)

// Gate is one --gate: a metric, optionally under one condition, compared
// with a threshold.
type Gate struct {
	Text      string  // as written
	Condition string  // "" for every condition
	Evaluator string  // "" when the metric was named alone
	Metric    string  // the metric's name, or the evaluator's when Evaluator is ""
	Bound     Bound   // what is compared
	Op        string  // >=, >, <= or <
	Threshold float64 // what it is compared with
	// Of is what of the metric a gate on the judge compares: "" for the
	// metric's own figures, OfAgreement (the judge against people: Figure
	// kappa or mae) or OfPPI (how far reviews move its mean: Figure shift).
	Of, Figure string
}

// The gates on the judge, by what they compare.
const (
	OfAgreement = "agreement"
	OfPPI       = "ppi"
)

// judgeFigures are the figures each kind of gate on the judge compares.
var judgeFigures = map[string][]string{OfAgreement: {"kappa", "mae"}, OfPPI: {"shift"}}

// ops are the comparisons a gate can make, longest first so that >= is
// not read as >.
var ops = []string{">=", "<=", ">", "<"}

// Parse reads a gate: [CONDITION:]METRIC[@ci_low|@ci_high]OP NUMBER, where
// METRIC is EVALUATOR.NAME (rubric.completeness), or a name alone
// (exact_match, or completeness when one evaluator has it); or a gate on
// the judge: agreement.METRIC.kappa or agreement.METRIC.mae (against
// people's reviews, over every condition), [CONDITION:]ppi.METRIC.shift
// (how far, either way, reviews move the judge's mean).
func Parse(text string) (Gate, error) {
	g := Gate{Text: text}
	lhs, err := g.parseComparison()
	if err != nil {
		return g, err
	}
	if c, rest, ok := strings.Cut(lhs, ":"); ok {
		g.Condition, lhs = strings.TrimSpace(c), strings.TrimSpace(rest)
		if g.Condition == "" {
			return g, fmt.Errorf("gate %q: no condition before ':'", text)
		}
	}
	if err := g.parseJudge(&lhs); err != nil {
		return g, err
	}
	if m, b, ok := strings.Cut(lhs, "@"); ok && g.Of == "" {
		switch Bound(b) {
		case BoundCILow, BoundCIHigh:
			g.Bound = Bound(b)
		default:
			return g, fmt.Errorf("gate %q: unknown bound @%s (want @ci_low or @ci_high)", text, b)
		}
		lhs = m
	}
	return g, g.parseMetric(lhs)
}

// parseComparison reads the gate's comparison and threshold, and returns
// what comes before them.
func (g *Gate) parseComparison() (string, error) {
	s := strings.TrimSpace(g.Text)
	i, op := -1, ""
	for _, o := range ops {
		if j := strings.Index(s, o); j >= 0 && (i < 0 || j < i) {
			i, op = j, o
		}
	}
	if i < 0 {
		return "", fmt.Errorf("gate %q: want METRIC>=NUMBER (or >, <=, <), e.g. rubric.completeness>=4.0", g.Text)
	}
	g.Op = op
	lhs, rhs := strings.TrimSpace(s[:i]), strings.TrimSpace(s[i+len(op):])
	v, err := strconv.ParseFloat(rhs, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return "", fmt.Errorf("gate %q: %q is not a number", g.Text, rhs)
	}
	g.Threshold = v
	return lhs, nil
}

// parseMetric reads the metric a gate names: EVALUATOR.METRIC, unless what
// comes before the dot is not an evaluator's name (an assertion's metric
// such as contains "runbook.md" is named alone).
func (g *Gate) parseMetric(lhs string) error {
	if e, name, ok := strings.Cut(lhs, "."); ok && !strings.ContainsAny(e, " \t\"'/") {
		if e == "" || name == "" {
			return fmt.Errorf("gate %q: want EVALUATOR.METRIC, e.g. rubric.completeness", g.Text)
		}
		g.Evaluator, lhs = e, name
	}
	if lhs == "" {
		return fmt.Errorf("gate %q: no metric named", g.Text)
	}
	if strings.ContainsAny(lhs+g.Evaluator, "=!<>") || strings.ContainsAny(g.Evaluator, " \t") {
		return fmt.Errorf("gate %q: want METRIC>=NUMBER (or >, <=, <), e.g. rubric.completeness>=4.0", g.Text)
	}
	g.Metric = lhs
	return nil
}

// parseJudge reads a gate on the judge: what it is of and its figure, off
// lhs.
func (g *Gate) parseJudge(lhs *string) error {
	for of, figures := range judgeFigures {
		rest, ok := strings.CutPrefix(*lhs, of+".")
		if !ok {
			continue
		}
		i := strings.LastIndex(rest, ".")
		if i < 0 || !slices.Contains(figures, rest[i+1:]) {
			return fmt.Errorf("gate %q: want %s.METRIC.%s, e.g. %s.rubric.completeness.%s", g.Text, of, strings.Join(figures, " or ."), of, figures[0])
		}
		if of == OfAgreement && g.Condition != "" {
			return fmt.Errorf("gate %q: agreement is over every condition's reviews: name no condition", g.Text)
		}
		g.Of, g.Figure, *lhs = of, rest[i+1:], rest[:i]
	}
	return nil
}

// String is the gate as written.
func (g Gate) String() string { return g.Text }

// matches reports whether m is the metric the gate names.
func (g Gate) matches(m report.Metric) bool {
	if g.Evaluator != "" {
		return m.Evaluator == g.Evaluator && m.Name == g.Metric
	}
	return m.Name == g.Metric
}

// Check reports, before a run, whether the gates name metrics and
// conditions the run's evaluators and conditions will give: a gate that can never be
// judged is a mistake worth stopping for. The metrics are those of the
// run's evaluators for a dataset of that kind, its own rubrics' and its
// assertions'; evaluators whose metrics are not known in advance let every
// gate through.
func Check(gates []Gate, cfg *config.Config, kind assay.Kind, conditions []string) error {
	known, open := knownMetrics(cfg, kind)
	for _, g := range gates {
		if g.Condition != "" && !slices.Contains(conditions, g.Condition) {
			return fmt.Errorf("gate %q: the run has no condition %q (it has %s)", g.Text, g.Condition, strings.Join(conditions, ", "))
		}
		if open {
			continue
		}
		if err := g.checkMetric(known); err != nil {
			return err
		}
	}
	return nil
}

// knownMetrics is the metrics the run's evaluators and assertions give;
// open when an evaluator's metrics are known only once it has scored.
func knownMetrics(cfg *config.Config, kind assay.Kind) (known []report.Metric, open bool) {
	for _, ev := range cfg.EvaluatorsFor(kind) {
		names := ev.Metrics()
		if name, ok := ev.Rubric(); ok {
			if r, found := cfg.RubricNamed(name); found {
				for _, m := range r.Metrics {
					names = append(names, m.Name)
				}
			}
		}
		if len(names) == 0 {
			open = true
		}
		for _, n := range names {
			known = append(known, report.Metric{Evaluator: ev.Label(), Name: n})
		}
	}
	for _, a := range cfg.Assertions {
		known = append(known, report.Metric{Evaluator: a.Kind, Name: a.Name})
	}
	return known, open
}

// checkMetric says whether the gate names exactly one of the known metrics.
func (g Gate) checkMetric(known []report.Metric) error {
	var found []report.Metric
	for _, m := range known {
		if g.matches(m) {
			found = append(found, m)
		}
	}
	switch {
	case len(found) == 0:
		var names []string
		for _, m := range known {
			names = append(names, metricName(m))
		}
		return fmt.Errorf("gate %q: the run's evaluators give no metric %q (they give %s)", g.Text, g.name(), strings.Join(names, ", "))
	case len(found) > 1:
		return fmt.Errorf("gate %q: %q is ambiguous: name its evaluator (%s or %s)", g.Text, g.Metric, metricName(found[0]), metricName(found[1]))
	}
	return nil
}

func (g Gate) name() string {
	if g.Evaluator != "" {
		return g.Evaluator + "." + g.Metric
	}
	return g.Metric
}

// metricName is how a gate names m: its evaluator and name, or one of them
// when they are the same.
func metricName(m report.Metric) string {
	if m.Name == m.Evaluator {
		return m.Name
	}
	return m.Evaluator + "." + m.Name
}

// Result is one gate judged under one condition.
type Result struct {
	Gate      string  `json:"gate"`
	Condition string  `json:"condition"`
	Metric    string  `json:"metric"` // evaluator.name
	Bound     string  `json:"bound"`  // mean, ci_low or ci_high
	Value     float64 `json:"value"`  // the figure compared; 0 when there is none
	N         int     `json:"n"`      // scores behind it
	Op        string  `json:"op"`
	Threshold float64 `json:"threshold"`
	Held      bool    `json:"held"`
	Message   string  `json:"message"`
}

// Judge judges every gate under every condition it applies to; a gate on
// the judge's agreement with people, once, on reviews (nil: none given).
func Judge(gates []Gate, s *report.Summary, reviews *report.Reviews) []Result {
	var out []Result
	for _, g := range gates {
		if g.Of == OfAgreement {
			out = append(out, judgeAgreement(g, reviews))
			continue
		}
		for _, c := range s.Conditions {
			if g.Condition != "" && c.Name != g.Condition {
				continue
			}
			if g.Of == OfPPI {
				out = append(out, judgePPI(g, c))
			} else {
				out = append(out, judge(g, c))
			}
		}
	}
	return out
}

func judge(g Gate, c report.ConditionSummary) Result {
	r := Result{Gate: g.Text, Condition: c.Name, Metric: g.name(), Bound: "mean", Op: g.Op, Threshold: g.Threshold}
	if g.Bound != BoundMean {
		r.Bound = string(g.Bound)
	}
	i := slices.IndexFunc(c.Metrics, func(m report.MetricSummary) bool {
		return g.matches(report.Metric{Evaluator: m.Evaluator, Name: m.Name})
	})
	if i < 0 || c.Metrics[i].N == 0 {
		r.Message = fmt.Sprintf("%s: no %s scores (%d results, %d errors)", c.Name, g.name(), c.Results, c.Errors)
		return r
	}
	m := c.Metrics[i]
	r.Metric = metricName(report.Metric{Evaluator: m.Evaluator, Name: m.Name})
	r.N = m.N
	switch g.Bound {
	case BoundCILow:
		r.Value = m.CI95[0]
	case BoundCIHigh:
		r.Value = m.CI95[1]
	default:
		r.Value = m.Mean
	}
	r.Held = compare(r.Value, g.Op, g.Threshold)
	r.Message = fmt.Sprintf("%s: %s %s %s %s %s (mean %s, 95%% CI [%s, %s], n %d)", c.Name, r.Metric, r.Bound,
		num(r.Value), Says(g.Op, r.Held), num(g.Threshold), num(m.Mean), num(m.CI95[0]), num(m.CI95[1]), m.N)
	return r
}

// Says is how a figure stands to a gate's threshold, in words: ">=" held
// is "is at least", failed "is below".
func Says(op string, held bool) string {
	words := map[string][2]string{">=": {"is below", "is at least"}, ">": {"is not above", "is above"},
		"<=": {"is above", "is at most"}, "<": {"is not below", "is below"}}[op]
	return words[btoi(held)]
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func compare(v float64, op string, t float64) bool {
	switch op {
	case ">=":
		return v >= t
	case ">":
		return v > t
	case "<=":
		return v <= t
	case "<":
		return v < t
	}
	return false
}

// num prints a figure with up to four decimals, without trailing zeros.
func num(v float64) string {
	return strconv.FormatFloat(math.Round(v*1e4)/1e4, 'f', -1, 64)
}

// Held reports whether every result held.
func Held(results []Result) bool {
	for _, r := range results {
		if !r.Held {
			return false
		}
	}
	return true
}
