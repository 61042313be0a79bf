// Package audit holds what a judge audit finds of a finished run's judge —
// how far padding an answer moves its scores (verbosity), how often the
// order of two answers decides which wins (position), whether the judge is
// of the family of a model it judges (self-preference), and how a panel's
// judges err together against people — and the arithmetic of each. The
// runner makes the audit's calls (runner.Manager.Audit).
package audit

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"assay/report"
	"assay/stats"
)

// The probes an audit may run.
const (
	ProbeVerbosity = "verbosity"
	ProbePosition  = "position"
	ProbeSelf      = "self"
)

// AllProbes are the probes run when none is named.
var AllProbes = []string{ProbeVerbosity, ProbePosition, ProbeSelf}

// DefaultSamples is how many answers (and pairs) an audit takes by default.
const DefaultSamples = 50

// Options choose what an audit does.
type Options struct {
	Probes  []string // of AllProbes; none: all
	Samples int      // answers padded, pairs compared; 0: DefaultSamples
	Budget  float64  // USD the audit may spend; 0: no bound
	Seed    uint64   // of the answers picked
}

// Asked are the probes o asks for: all when it names none.
func (o Options) Asked() []string {
	if len(o.Probes) == 0 {
		return AllProbes
	}
	return o.Probes
}

// ParseProbes reads a comma-separated list of probes.
func ParseProbes(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return AllProbes, nil
	}
	var out []string
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		if !slices.Contains(AllProbes, p) {
			return nil, fmt.Errorf("probe %q: want %s", p, strings.Join(AllProbes, ", "))
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out, nil
}

// Result is what an audit found, as `assay audit --json` prints it and the
// report shows it.
type Result struct {
	RunID            int64             `json:"run_id"`
	At               time.Time         `json:"at"`
	Probes           Probes            `json:"probes"`
	ErrorCorrelation *ErrorCorrelation `json:"error_correlation,omitempty"`
	// Estimate is what the audit was expected to call and cost before it
	// started; Calls and CostUSD what it did. None of it is the run's.
	Estimate Estimate `json:"estimate"`
	Calls    int      `json:"calls"`
	CostUSD  float64  `json:"cost_usd"`
	Errors   int      `json:"errors"` // judge calls that failed, left out of the figures
}

// Estimate is an audit's expected calls and cost.
type Estimate struct {
	Calls   int     `json:"calls"`
	CostUSD float64 `json:"cost_usd"`
	Priced  bool    `json:"priced"` // false: the judge's calls have no price
}

// Probes are the figures of each probe run.
type Probes struct {
	Verbosity      *Verbosity      `json:"verbosity,omitempty"`
	Position       *Position       `json:"position,omitempty"`
	SelfPreference *SelfPreference `json:"self_preference,omitempty"`
}

// Verbosity is the mean change of a score when its answer is padded with
// content-free sentences, in the metric's own units, with a 95% interval
// over samples: a fair judge shows about 0.
type Verbosity struct {
	Delta   float64       `json:"delta"`
	CI95    [2]float64    `json:"ci95"`
	N       int           `json:"n"` // answers padded and judged again; the interval is over their samples
	Metrics []MetricDelta `json:"metrics"`
	Why     string        `json:"why,omitempty"` // why there is no figure
	// Shortened is the same for the answers that could be shortened without
	// losing a fact (Shorten); nil when none could.
	Shortened *Shortening `json:"shortened,omitempty"`
}

// MetricDelta is one metric's mean change.
type MetricDelta struct {
	Evaluator string     `json:"evaluator"`
	Metric    string     `json:"metric"`
	Delta     float64    `json:"delta"`
	CI95      [2]float64 `json:"ci95"`
	N         int        `json:"n"` // changes: answers × judges
}

// Position is how two answers' order decides the judge's choice: the share
// of pairs whose winner changes with the order (a fair judge: about 0) and
// the share of choices that went to the first answer (about 0.5), each
// with its 95% Wilson interval.
type Position struct {
	FlipRate  float64    `json:"flip_rate"`
	FlipCI95  [2]float64 `json:"flip_ci95"`
	FirstWins float64    `json:"first_wins"`
	CI95      [2]float64 `json:"ci95"`
	N         int        `json:"n"` // pairs, each judged in both orders
	Why       string     `json:"why,omitempty"`
}

// SelfPreference flags a judge of the family of a model it judges and,
// with a panel judging several models, measures it (report.SelfPreference:
// how much more the judge favours its family's answers than the panel's
// other judges do, against the other models' answers). Delta and CI95 are
// the first flagged judge's; Measured has each.
type SelfPreference struct {
	Flagged  []report.SameFamily     `json:"flagged"`
	Delta    *float64                `json:"delta"`
	CI95     *[2]float64             `json:"ci95"`
	Measured []report.SelfPreference `json:"measured,omitempty"`
	// ByReviews measures each flagged judge against people, where reviewers
	// scored answers of its family's model and of another.
	ByReviews []report.SelfPreferenceByReviews `json:"by_reviews,omitempty"`
}

// ErrorCorrelation is how a panel's judges err together against people,
// on the first metric reviewed (report.JudgeErrors).
type ErrorCorrelation struct {
	Metric      string       `json:"metric"`
	Judges      []string     `json:"judges"`
	Matrix      [][]*float64 `json:"matrix"`
	N           int          `json:"n"`
	PanelBetter bool         `json:"panel_better"`
}

// Padding is the content-free text a verbosity probe appends to an answer:
// it restates nothing and adds no fact, only length.
const Padding = "\n\nTo put it another way, the answer above is given in full. " +
	"It is stated as plainly as the question allows, and each part of it is meant to be read together with the rest. " +
	"Nothing further needs to be added to it, and nothing in it needs to be taken back. " +
	"This is the whole of the answer, as it was meant to be given."

// Pad is an answer with Padding after it.
func Pad(answer string) string { return answer + Padding }

// Change is one padded answer's change of one metric.
type Change struct {
	Answer, Sample    int64 // the result's id, and its sample's row
	Evaluator, Metric string
	Delta             float64
}

// VerbosityOf summarises the changes: overall, each answer's changes
// averaged over its metrics, clustered by sample; and per metric.
func VerbosityOf(changes []Change) *Verbosity {
	v := &Verbosity{Metrics: []MetricDelta{}}
	if len(changes) == 0 {
		v.Why = "no judged answer to pad"
		return v
	}
	bySample := map[int64][]float64{}
	answers := map[int64]bool{}
	var order []int64
	type key struct{ ev, metric string }
	byMetric := map[key]map[int64][]float64{}
	var metrics []key
	for _, c := range changes {
		answers[c.Answer] = true
		if _, ok := bySample[c.Sample]; !ok {
			order = append(order, c.Sample)
		}
		bySample[c.Sample] = append(bySample[c.Sample], c.Delta)
		k := key{c.Evaluator, c.Metric}
		if byMetric[k] == nil {
			byMetric[k] = map[int64][]float64{}
			metrics = append(metrics, k)
		}
		byMetric[k][c.Sample] = append(byMetric[k][c.Sample], c.Delta)
	}
	groups := make([][]float64, 0, len(order))
	for _, s := range order {
		groups = append(groups, bySample[s])
	}
	s := stats.Clustered(groups)
	v.Delta, v.CI95, v.N = s.Mean, [2]float64{s.CILo, s.CIHi}, len(answers)
	for _, k := range metrics {
		var g [][]float64
		n := 0
		for _, s := range order {
			if d := byMetric[k][s]; len(d) > 0 {
				g, n = append(g, d), n+len(d)
			}
		}
		ms := stats.Clustered(g)
		v.Metrics = append(v.Metrics, MetricDelta{Evaluator: k.ev, Metric: k.metric, Delta: ms.Mean, CI95: [2]float64{ms.CILo, ms.CIHi}, N: n})
	}
	return v
}

// Pair is one pair of answers judged in both orders: whether the first
// answer won when A came first, and when B came first.
type Pair struct{ FirstWonAB, FirstWonBA bool }

// PositionOf summarises pairs judged in both orders.
func PositionOf(pairs []Pair) *Position {
	p := &Position{N: len(pairs)}
	if len(pairs) == 0 {
		p.Why = "no two conditions answered the same sample"
		p.FlipCI95, p.CI95 = [2]float64{0, 1}, [2]float64{0, 1}
		return p
	}
	flips, first := 0, 0
	for _, x := range pairs {
		if x.FirstWonAB == x.FirstWonBA { // the same place won both times: the order decided
			flips++
		}
		if x.FirstWonAB {
			first++
		}
		if x.FirstWonBA {
			first++
		}
	}
	n := len(pairs)
	p.FlipRate, p.FirstWins = float64(flips)/float64(n), float64(first)/float64(2*n)
	p.FlipCI95[0], p.FlipCI95[1] = stats.Wilson(flips, n)
	p.CI95[0], p.CI95[1] = stats.Wilson(first, 2*n)
	return p
}

// Complete adds what the run's report knows: the judges of a model's own
// family (self-preference) and how a panel's judges err against people.
func (r *Result) Complete(rep *report.Report, probes []string) {
	if slices.Contains(probes, ProbeSelf) {
		flagged := report.SameFamilies(rep.Config)
		if flagged == nil {
			flagged = []report.SameFamily{}
		}
		sp := &SelfPreference{Flagged: flagged}
		for _, f := range rep.FlaggedJudges() {
			if m, ok := rep.SelfPreferenceOf(f.Place, f.Family); ok {
				sp.Measured = append(sp.Measured, m)
			}
		}
		if rep.Reviews != nil {
			sp.ByReviews = rep.Reviews.SelfByReviews
		}
		switch {
		case len(sp.Measured) > 0:
			d, ci := sp.Measured[0].Delta, sp.Measured[0].CI95
			sp.Delta, sp.CI95 = &d, &ci
		case len(sp.ByReviews) > 0:
			d, ci := sp.ByReviews[0].Delta, sp.ByReviews[0].CI95
			sp.Delta, sp.CI95 = &d, &ci
		}
		r.Probes.SelfPreference = sp
	}
	if rep.Reviews != nil && len(rep.Reviews.JudgeErrors) > 0 {
		e := rep.Reviews.JudgeErrors[0]
		r.ErrorCorrelation = &ErrorCorrelation{Metric: e.Metric.Label(), Judges: e.Judges, Matrix: e.Matrix, N: e.N, PanelBetter: e.PanelBetter}
	}
}

// Lines say an audit's figures in words, a line per probe.
func Lines(r *Result) []string { return LinesJudged(r, nil) }

// LinesJudged is Lines where gates judge some figures: verdicts by figure
// (verbosity, position, first_wins) say how each gate held, in place of the
// probe's own judgement, so that each figure is judged once.
func LinesJudged(r *Result, verdicts map[string]string) []string {
	var out []string
	if v := r.Probes.Verbosity; v != nil {
		out = append(out, verbosityLines(v, verdicts)...)
	}
	if p := r.Probes.Position; p != nil {
		out = append(out, positionLine(p, verdicts))
	}
	if s := r.Probes.SelfPreference; s != nil {
		out = append(out, selfPreferenceLines(s)...)
	}
	if e := r.ErrorCorrelation; e != nil {
		verdict := "the panel's mean errs no less than its best judge: they err together"
		if e.PanelBetter {
			verdict = "the panel's mean errs less than its best judge"
		}
		out = append(out, fmt.Sprintf("error correlation (%s, %s people scored): %s", e.Metric, plural(e.N, "answer"), verdict))
	}
	return out
}

// verbosityLines say what padding, and shortening, the answers did to
// their scores.
func verbosityLines(v *Verbosity, verdicts map[string]string) []string {
	var out []string
	if v.Why != "" {
		out = append(out, "verbosity: "+v.Why)
	} else {
		judged := fairness(v.CI95)
		if g, ok := verdicts["verbosity"]; ok {
			judged = ": " + g
		}
		out = append(out, fmt.Sprintf("verbosity: padding %s with content-free sentences moved their scores by %+.2f on average (95%% CI %+.2f to %+.2f)%s",
			plural(v.N, "answer"), v.Delta, v.CI95[0], v.CI95[1], judged))
	}
	if s := v.Shortened; s != nil {
		out = append(out, fmt.Sprintf("verbosity: shortening %s (their filler sentences and repeats removed; %d of the answers allowed it) moved their scores by %+.2f on average (95%% CI %+.2f to %+.2f)%s",
			plural(s.N, "answer"), s.Of, s.Delta, s.CI95[0], s.CI95[1], fairness(s.CI95)))
	}
	return out
}

// positionLine says how often the order of a pair changed its winner, and
// how often the first answer won.
func positionLine(p *Position, verdicts map[string]string) string {
	if p.Why != "" {
		return "position: " + p.Why
	}
	line := fmt.Sprintf("position: of %s judged in both orders, %.0f%% changed winner with the order (95%% CI %.0f–%.0f%%); the first answer won %.0f%% of the choices (%.0f–%.0f%%; a fair judge: 50%%)",
		plural(p.N, "pair"), 100*p.FlipRate, 100*p.FlipCI95[0], 100*p.FlipCI95[1], 100*p.FirstWins, 100*p.CI95[0], 100*p.CI95[1])
	for _, figure := range []string{"position", "first_wins"} {
		if g, ok := verdicts[figure]; ok {
			line += "; " + g
		}
	}
	return line
}

// selfPreferenceLines say which judges share a family with a model they
// judge, and how far each favours its family, against the other judges
// and against people.
func selfPreferenceLines(s *SelfPreference) []string {
	var out []string
	if len(s.Flagged) == 0 {
		out = append(out, "self-preference: no judge is of the family of a model it judges")
	}
	for _, f := range s.Flagged {
		out = append(out, fmt.Sprintf("self-preference: the judge %s and the agent's %s are both %s: it may favour its own family's answers", f.Judge, f.Model, f.Family))
	}
	for _, m := range s.Measured {
		line := fmt.Sprintf("self-preference: %s scores %s answers %+.2f more than the panel's other judges do, against the other models' answers (95%% CI %+.2f to %+.2f, %s)%s",
			m.Judge, m.Family, m.Delta, m.CI95[0], m.CI95[1], plural(m.Samples, "sample"), prefers(m.CI95))
		if m.OtherJudges == 1 {
			line += " — against one other judge, either's preference shows in both"
		}
		out = append(out, line)
	}
	for _, m := range s.ByReviews {
		out = append(out, fmt.Sprintf("self-preference against people: %s's scores exceed reviewers' by %+.2f more on %s answers than on the other models' (95%% CI %+.2f to %+.2f; %d and %d reviewed answers)%s",
			m.Judge, m.Delta, m.Family, m.CI95[0], m.CI95[1], m.Own, m.Rest, prefers(m.CI95)))
	}
	return out
}

// fairness says whether an interval holds 0.
func fairness(ci [2]float64) string {
	if ci[0] <= 0 && ci[1] >= 0 {
		return ": no bias shown"
	}
	return ": the judge is swayed by length"
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// prefers says whether a self-preference interval holds 0.
func prefers(ci [2]float64) string {
	if ci[0] <= 0 && ci[1] >= 0 {
		return ": no preference shown"
	}
	if ci[0] > 0 {
		return ": it favours its own family"
	}
	return ": it is harder on its own family"
}

// fillers are sentences that carry nothing of an answer: what Shorten
// removes, matched whole and without regard to case.
var fillers = []string{
	"i hope this helps", "hope this helps", "let me know if you have any other questions",
	"let me know if you have any questions", "feel free to ask if you have any other questions",
	"great question", "good question", "certainly", "sure", "of course", "absolutely",
	"i'd be happy to help", "i would be happy to help", "happy to help",
}

// fillerKey is a sentence as fillers are written: trimmed, lower case,
// without its final stop.
func fillerKey(sentence string) string {
	return strings.ToLower(strings.TrimRight(strings.TrimSpace(sentence), ".!?"))
}

// The padding's own sentences are filler too.
func init() {
	for _, line := range strings.Split(Padding, "\n") {
		for _, s := range sentences(line) {
			if k := fillerKey(s); k != "" {
				fillers = append(fillers, k)
			}
		}
	}
}

// Shorten removes from an answer what carries nothing — filler sentences
// ("I hope this helps!", "Great question!"), a sentence said twice, blank
// lines — and reports whether that made it shorter: the same facts in
// fewer words, where an answer allows it.
func Shorten(answer string) (string, bool) {
	var kept []string
	seen := map[string]bool{}
	for _, line := range strings.Split(answer, "\n") {
		var out []string
		for _, sentence := range sentences(line) {
			key := fillerKey(sentence)
			if key == "" || slices.Contains(fillers, key) || seen[key] {
				continue
			}
			seen[key] = true
			out = append(out, strings.TrimSpace(sentence))
		}
		if len(out) > 0 {
			kept = append(kept, strings.Join(out, " "))
		}
	}
	short := strings.Join(kept, "\n")
	return short, short != "" && len(short) < len(strings.TrimSpace(answer))*9/10
}

// sentences cuts a line after each ., ! or ? followed by a space or its end.
func sentences(line string) []string {
	var out []string
	start := 0
	for i := 0; i < len(line); i++ {
		if c := line[i]; (c == '.' || c == '!' || c == '?') && (i+1 == len(line) || line[i+1] == ' ') {
			out = append(out, line[start:i+1])
			start = i + 1
		}
	}
	if strings.TrimSpace(line[start:]) != "" {
		out = append(out, line[start:])
	}
	return out
}

// Shortening is the mean change of a score when its answer is shortened
// (Shorten), as Verbosity's: a judge that favours length scores shortened
// answers lower. Of counts the answers that allowed it.
type Shortening struct {
	Delta float64    `json:"delta"`
	CI95  [2]float64 `json:"ci95"`
	N     int        `json:"n"`
	Of    int        `json:"of"`
}

// ShorteningOf summarises the changes of shortened answers; of of them
// could be shortened.
func ShorteningOf(changes []Change, of int) *Shortening {
	if of == 0 {
		return nil
	}
	v := VerbosityOf(changes)
	return &Shortening{Delta: v.Delta, CI95: v.CI95, N: v.N, Of: of}
}
