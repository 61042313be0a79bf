package report

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"assay/stats"
)

// Variance is one metric's variance under one condition, on the metric's
// scale (squared), split into its parts: between samples, agent (between
// repetitions of a sample) and judge (between scores of one answer). The
// parts add up to Total. A part not measured is 0 and inside another: see
// stats.Components.
type Variance struct {
	Total         float64 `json:"total"`
	Sample        float64 `json:"sample"`
	Agent         float64 `json:"agent"`
	Judge         float64 `json:"judge"`
	AgentMeasured bool    `json:"agent_measured"`
	JudgeMeasured bool    `json:"judge_measured"`
	// AgentClamped and SampleClamped: the part came out below 0 and is
	// given as 0 (see stats.Components).
	AgentClamped  bool `json:"agent_clamped,omitempty"`
	SampleClamped bool `json:"sample_clamped,omitempty"`
	// SharesCI95 are 95% bootstrap intervals (over samples) of each part's
	// share of the total, by part: "sample", "agent", "judge".
	SharesCI95 map[string][2]float64 `json:"shares_ci95"`
}

// varianceIterations is the bootstrap of the shares' intervals: a resample
// costs one pass over samples.
const varianceIterations = 500

// varianceOf splits the variance of groups' scores.
func varianceOf(groups []SampleScores) *Variance {
	c, ci := stats.DecomposeCIEach(len(groups), func(i int, yield func([]float64)) { groups[i].eachRun(false, yield) },
		varianceIterations, pairSeed)
	return &Variance{Total: c.Total, Sample: c.Sample, Agent: c.Agent, Judge: c.Judge,
		AgentMeasured: c.AgentMeasured, JudgeMeasured: c.JudgeMeasured,
		AgentClamped: c.AgentClamped, SampleClamped: c.SampleClamped,
		SharesCI95: map[string][2]float64{"sample": ci.Sample, "agent": ci.Agent, "judge": ci.Judge}}
}

// Shares are the parts as fractions of the total.
func (v *Variance) Shares() (sample, agent, judge float64) {
	if v == nil || v.Total <= 0 {
		return 0, 0, 0
	}
	return v.Sample / v.Total, v.Agent / v.Total, v.Judge / v.Total
}

// Dominant is the largest part of the spread: "judge", "agent" or
// "sample"; "" when the scores do not vary.
func (v *Variance) Dominant() string {
	if v == nil || v.Total <= 0 {
		return ""
	}
	s, a, j := v.Shares()
	switch {
	case j >= a && j >= s:
		return "judge"
	case a >= s:
		return "agent"
	}
	return "sample"
}

// Advice says what narrows a spread whose largest part is dominant.
func Advice(dominant string) string {
	switch dominant {
	case "judge":
		return "the judge scores one answer differently from one time to the next: more judge repetitions or a stricter rubric will help more than more agent repetitions."
	case "agent":
		return "the same question, answered again, scores differently: more repetitions will narrow the mean more than more judge repetitions."
	case "sample":
		return "the questions differ: more samples, not more repetitions, will narrow the interval."
	}
	return "the scores do not vary."
}

// Sentence says which part dominates a metric's spread and what would
// narrow it most.
func (v *Variance) Sentence(metric string) string {
	if v == nil || v.Total <= 0 {
		return fmt.Sprintf("The scores of %s do not vary.", metric)
	}
	s, a, j := v.Shares()
	var out string
	switch {
	case j >= a && j >= s:
		out = fmt.Sprintf("%s of the spread in %s is the judge: more judge repetitions or a stricter rubric will help more than more agent repetitions.", capital(shareWords(j)), metric)
	case a >= s:
		out = fmt.Sprintf("%s of the spread in %s is the agent — the same question, answered again, scores differently: more repetitions will narrow the mean more than more judge repetitions.", capital(shareWords(a)), metric)
	default:
		out = fmt.Sprintf("%s of the spread in %s is between samples — the questions differ: more samples, not more repetitions, will narrow the interval.", capital(shareWords(s)), metric)
	}
	return out
}

// Unmeasured says which parts the run cannot tell apart, and how it could;
// "" when it measures all three.
func (v *Variance) Unmeasured() string {
	switch {
	case v == nil:
		return ""
	case !v.AgentMeasured && !v.JudgeMeasured:
		return "One score per sample: neither the agent's part nor the judge's can be told apart from the samples'; run two repetitions or more, and judge each answer twice or more."
	case !v.JudgeMeasured:
		return "One judge score per answer: the judge's part is inside the agent's; set judge repetitions to 2 or more to separate them."
	case !v.AgentMeasured:
		return "One repetition: the agent's part is inside the samples'; run two repetitions or more to separate them."
	}
	return ""
}

// shareWords says a share as a person would: "two thirds", "about half", "38%".
func shareWords(x float64) string {
	switch {
	case x >= 0.995:
		return "all"
	case x >= 0.9:
		return "nearly all"
	}
	for _, w := range []struct {
		v    float64
		word string
	}{{0.75, "three quarters"}, {2.0 / 3, "two thirds"}, {0.5, "half"}, {1.0 / 3, "a third"}, {0.25, "a quarter"}} {
		if math.Abs(x-w.v) < 0.02 {
			return w.word
		}
	}
	return fmt.Sprintf("%.0f%%", 100*x)
}

func capital(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// JudgeConsistency is how well a judge agrees with itself on one metric:
// over the answers it scored more than once (each judge of a panel with
// itself).
type JudgeConsistency struct {
	Answers int     `json:"answers"`       // answers scored twice or more
	Exact   float64 `json:"exact"`         // share of them whose scores are all the same
	MAD     float64 `json:"mean_abs_diff"` // mean |difference| between two scores of one answer
	// Alpha is Krippendorff's ordinal alpha with the judge repetitions as
	// raters; absent when undefined (a single value throughout).
	Alpha *float64 `json:"alpha,omitempty"`
}

// consistencyOf measures the judge against itself; nil when no answer was
// scored twice.
func consistencyOf(groups []SampleScores) *JudgeConsistency {
	var units [][]float64
	var same, pairs int
	var diff float64
	for _, g := range groups {
		g.eachRun(true, func(scores []float64) {
			if len(scores) < 2 {
				return
			}
			units = append(units, scores)
			equal := true
			for i := range scores {
				for k := i + 1; k < len(scores); k++ {
					d := math.Abs(scores[i] - scores[k])
					diff += d
					pairs++
					if d > 1e-9 {
						equal = false
					}
				}
			}
			if equal {
				same++
			}
		})
	}
	if len(units) == 0 {
		return nil
	}
	c := &JudgeConsistency{Answers: len(units), Exact: float64(same) / float64(len(units)), MAD: diff / float64(pairs)}
	if a := stats.KrippendorffAlpha(units, stats.Ordinal); !math.IsNaN(a) {
		c.Alpha = &a
	}
	return c
}

// mddOf is the minimum detectable paired difference of a metric between two
// conditions, from the samples scored under both; ok is false with fewer
// than two such samples.
// xa and xb are in the samples' order, so that the same scores give the
// same figure to the last bit (a backup restored, an export read back).
func mddOf(xa, xb []float64) (mdd float64, sd float64, n int, ok bool) {
	diffs := make([]float64, len(xa))
	for i := range xa {
		diffs[i] = xb[i] - xa[i]
	}
	if len(diffs) < 2 {
		return 0, 0, len(diffs), false
	}
	_, sd = stats.Describe(diffs)
	return stats.MinDetectable(sd, len(diffs), stats.Alpha, stats.Power), sd, len(diffs), true
}

// JudgeFigure is one judge of a panel on one metric: its mean over the
// answers it scored, and how far it sits from the panel on the same answers
// (the mean of its score minus the panel's mean score of each answer;
// below 0: harsher than the panel).
type JudgeFigure struct {
	Name   string  `json:"name"`
	Mean   float64 `json:"mean"`
	Offset float64 `json:"offset"`
	N      int     `json:"n"` // answers scored
}

// panelOf describes each judge of a panel and how they agree: Krippendorff's
// ordinal alpha with the judges as raters, over each judge's first score
// of each answer (nil when undefined).
func panelOf(groups []SampleScores, names []string) ([]JudgeFigure, *float64) {
	if len(names) < 2 {
		return nil, nil
	}
	sums, offsets := make([]float64, len(names)), make([]float64, len(names))
	counts := make([]int, len(names))
	var units [][]float64
	for _, g := range groups {
		values := g.Values()
		for start := 0; start < len(values); {
			end := start
			for end < len(values) && g.rep(end) == g.rep(start) {
				end++
			}
			jsum, jn := map[int8]float64{}, map[int8]int{}
			first := map[int8]float64{}
			for k := start; k < end; k++ {
				j := g.judge(k)
				if _, seen := first[j]; !seen {
					first[j] = values[k]
				}
				jsum[j] += values[k]
				jn[j]++
			}
			judges := slices.Sorted(maps.Keys(jsum)) // in the panel's order: the same sums every time
			var panel float64
			for _, j := range judges {
				panel += jsum[j] / float64(jn[j])
			}
			panel /= float64(len(jsum))
			var unit []float64
			for _, j := range judges {
				if int(j) >= len(names) {
					continue
				}
				m := jsum[j] / float64(jn[j])
				sums[j] += m
				offsets[j] += m - panel
				counts[j]++
				unit = append(unit, first[j])
			}
			units = append(units, unit)
			start = end
		}
	}
	out := make([]JudgeFigure, len(names))
	for j, name := range names {
		out[j] = JudgeFigure{Name: name, N: counts[j]}
		if counts[j] > 0 {
			out[j].Mean, out[j].Offset = sums[j]/float64(counts[j]), offsets[j]/float64(counts[j])
		}
	}
	var alpha *float64
	if a := stats.KrippendorffAlpha(units, stats.Ordinal); !math.IsNaN(a) {
		alpha = &a
	}
	return out, alpha
}
