package report

import (
	"math"
	"slices"
	"sync"

	"assay/config"
	"assay/stats"
	"assay/store"
	"assay/tally"
)

// View is how a report reads the scores reviewers overrode.
type View int

// The views of a report.
const (
	AsJudged View = iota // every score as the judge gave it
	Reviewed             // an override replaces the judge's value in every figure
)

// kappaSeed fixes the bootstrap of kappa's interval, so that a report shows
// the same interval each time; kappaIterations are its resamples.
const (
	kappaSeed       = 2
	kappaIterations = 1000
)

// Reviews is what reviewers said of a run's scores: how many they looked
// at, and how well the judge agrees with them.
type Reviews struct {
	Verdicts   int      // all verdicts, every reviewer's
	Scored     int      // scores with at least one verdict
	Overridden int      // of which the latest verdict overrides the judge
	Reviewers  []string // by name
	Coverage   []Coverage
	Agreement  []Agreement // per metric with a reviewed score, in report order
	// JudgeErrors are, per metric a panel scored, where its judges err
	// against people and whether they err together.
	JudgeErrors []JudgeErrors
	// SelfByReviews measure, against people, each judge of an agent
	// model's family.
	SelfByReviews []SelfPreferenceByReviews
	// Corrected are the means corrected by reviews, by metric (its place in
	// the report's order) and condition; absent under MinPPIReviews.
	Corrected map[MetricCondition]*PPI
	// people are people's value of each answer reviewed, by metric and
	// condition: what corrected differences are computed from.
	people map[MetricCondition]map[answerKey]float64
}

// MetricCondition names a metric (by its place in the report's order)
// under a condition.
type MetricCondition struct {
	Metric    int
	Condition string
}

// Coverage is how many of one metric's scores under one condition were reviewed.
type Coverage struct {
	Metric    Metric
	Condition string
	Reviewed  int
	Total     int
}

// MinKappaReviews is the fewest reviewed scores a kappa is given for.
const MinKappaReviews = 2

// Agreement compares the judge with the reviewers on one metric, over the
// scores reviewed, taking each score's latest verdict as the human value.
type Agreement struct {
	Metric     Metric     `json:"-"`
	Evaluator  string     `json:"evaluator"`
	Name       string     `json:"name"`
	Reviewed   int        `json:"reviewed"`   // scores with a verdict
	Overridden int        `json:"overridden"` // whose latest verdict changed the value
	Exact      float64    `json:"exact"`      // share where the judge and the human agree exactly
	Within1    *float64   `json:"within1"`    // share within one point (1–5 scales only)
	MAD        float64    `json:"mad"`        // mean absolute difference
	MADCI95    [2]float64 `json:"mad_ci95"`   // its 95% interval over the scores reviewed
	JudgeMean  float64    `json:"judge_mean"` // over the reviewed scores
	HumanMean  float64    `json:"human_mean"`
	Kappa      *float64   `json:"kappa"` // quadratic-weighted Cohen's kappa; nil when undefined or under MinKappaReviews
	KappaCI95  [2]float64 `json:"kappa_ci95"`
	Categories []float64  `json:"categories"`
	Confusion  [][]int    `json:"confusion"` // judge category × human category
	// Alpha is Krippendorff's ordinal alpha between reviewers over the
	// scores that several reviewed; nil when none was.
	Alpha         *float64 `json:"alpha_between_reviewers"`
	MultiReviewed int      `json:"multi_reviewed"`
	// EffectiveJudges is, for a panel, how many independent judges it is
	// worth against people (JudgeErrors.EffectiveJudges); absent otherwise.
	EffectiveJudges *float64 `json:"effective_judges,omitempty"`
}

// Categories are the values a scale's agreement is counted in: 1 to 5,
// 0 and 1, or tenths of 0–1.
func Categories(sc config.Scale) []float64 {
	switch sc {
	case config.ScaleLikert:
		return []float64{1, 2, 3, 4, 5}
	case config.ScalePass:
		return []float64{0, 1}
	}
	out := make([]float64, 11)
	for i := range out {
		out[i] = float64(i) / 10
	}
	return out
}

// latest is each reviewed score's latest verdict.
func latest(verdicts []store.Review) map[int64]store.Review {
	out := make(map[int64]store.Review, len(verdicts))
	for _, v := range verdicts {
		if p, ok := out[v.ScoreID]; !ok || !v.At.Before(p.At) {
			out[v.ScoreID] = v
		}
	}
	return out
}

// applyReviews is scores with each reviewed score's value replaced by its
// latest verdict's; scores are left as they are.
func applyReviews(scores []tally.MetricScores, last map[int64]store.Review) []tally.MetricScores {
	out := slices.Clone(scores)
	for k := range out {
		m := &out[k]
		cloned := false
		for i, id := range m.IDs {
			if v, ok := last[id]; ok {
				if !cloned {
					m.Values, cloned = slices.Clone(m.Values), true
				}
				m.Values[i] = v.Value
			}
		}
	}
	return out
}

// reviewedScore is what agreement needs of a score reviewers looked at.
type reviewedScore struct{ evaluator, metric string }

// reviews computes coverage and agreement. scores are the run's scores as
// judged.
func (r *Report) reviews(scores []tally.MetricScores, verdicts []store.Review) *Reviews {
	out := &Reviews{Verdicts: len(verdicts)}
	last := latest(verdicts)
	out.Scored = len(last)
	byScore := map[int64][]float64{}
	for _, v := range verdicts {
		byScore[v.ScoreID] = append(byScore[v.ScoreID], v.Value)
		if !slices.Contains(out.Reviewers, v.Reviewer) {
			out.Reviewers = append(out.Reviewers, v.Reviewer)
		}
	}
	slices.Sort(out.Reviewers)
	for _, v := range last {
		if v.Verdict == store.VerdictOverride && v.Value != v.JudgeValue {
			out.Overridden++
		}
	}
	judge := r.coverage(out, scores, last)
	// Each metric's agreement bootstraps its kappa: they are computed in parallel.
	agreements := make([]Agreement, len(r.Metrics))
	found := make([]bool, len(r.Metrics))
	var wg sync.WaitGroup
	for i, m := range r.Metrics {
		wg.Go(func() { agreements[i], found[i] = agreement(m, last, judge, byScore) })
	}
	wg.Wait()
	out.Corrected, out.people = r.correctedMeans(scores, last)
	out.JudgeErrors = r.judgeErrors(scores, last)
	out.SelfByReviews = r.selfPreferenceByReviews(scores, last)
	for i, a := range agreements {
		if !found[i] {
			continue
		}
		for _, e := range out.JudgeErrors {
			if e.Evaluator == a.Evaluator && e.Name == a.Name {
				a.EffectiveJudges = &e.EffectiveJudges
			}
		}
		out.Agreement = append(out.Agreement, a)
	}
	return out
}

// coverage counts, per metric and condition, the scores and those
// reviewed, into out; it returns what each reviewed score is of.
func (r *Report) coverage(out *Reviews, scores []tally.MetricScores, last map[int64]store.Review) map[int64]reviewedScore {
	type key struct{ evaluator, metric, condition string }
	total, reviewed := map[key]int{}, map[key]int{}
	judge := map[int64]reviewedScore{}
	for _, m := range scores {
		k := key{m.Evaluator, m.Metric, m.Condition}
		total[k] += m.Len()
		if len(last) == 0 {
			continue
		}
		for _, id := range m.IDs {
			if _, ok := last[id]; ok {
				reviewed[k]++
				judge[id] = reviewedScore{m.Evaluator, m.Metric}
			}
		}
	}
	for _, m := range r.Metrics {
		for _, c := range r.Conditions {
			k := key{m.Evaluator, m.Name, c}
			if total[k] > 0 {
				out.Coverage = append(out.Coverage, Coverage{Metric: m, Condition: c, Reviewed: reviewed[k], Total: total[k]})
			}
		}
	}
	return judge
}

// agreement compares the judge and the latest human value on metric m.
func agreement(m Metric, last map[int64]store.Review, judge map[int64]reviewedScore, byScore map[int64][]float64) (Agreement, bool) {
	a := Agreement{Metric: m, Evaluator: m.Evaluator, Name: m.Name, Categories: Categories(m.Scale)}
	var js, hs []float64
	var units [][]float64
	ids := make([]int64, 0, len(judge))
	for id, s := range judge {
		if s.evaluator == m.Evaluator && s.metric == m.Name {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids) // a fixed order: the bootstrap's interval must not depend on map order
	for _, id := range ids {
		v := last[id]
		js = append(js, v.JudgeValue)
		hs = append(hs, v.Value)
		if v.Value != v.JudgeValue {
			a.Overridden++
		}
		if len(byScore[id]) >= 2 {
			units = append(units, byScore[id])
		}
	}
	a.Reviewed = len(js)
	if a.Reviewed == 0 {
		return a, false
	}
	a.distances(js, hs)
	a.JudgeMean, a.HumanMean = Mean(js), Mean(hs)
	// One reviewed score has no agreement beyond chance to measure.
	if k := stats.WeightedKappa(js, hs, a.Categories); !math.IsNaN(k) && a.Reviewed >= MinKappaReviews {
		a.Kappa = &k
		a.KappaCI95[0], a.KappaCI95[1] = stats.KappaCI(js, hs, a.Categories, kappaIterations, kappaSeed)
	}
	a.Confusion = stats.Confusion(js, hs, a.Categories)
	if len(units) > 0 {
		a.MultiReviewed = len(units)
		if al := stats.KrippendorffAlpha(units, stats.Ordinal); !math.IsNaN(al) {
			a.Alpha = &al
		}
	}
	return a, true
}

// distances measures how far the judge's values stand from the humans':
// the share exactly alike, within one point on a Likert scale, and the
// mean absolute difference with its interval.
func (a *Agreement) distances(js, hs []float64) {
	var exact, within int
	var absSum float64
	for i := range js {
		d := math.Abs(js[i] - hs[i])
		absSum += d
		if d < 1e-9 {
			exact++
		}
		if d <= 1+1e-9 {
			within++
		}
	}
	n := float64(len(js))
	a.Exact, a.MAD = float64(exact)/n, absSum/n
	a.MADCI95 = madInterval(js, hs)
	if a.Metric.Scale == config.ScaleLikert {
		w := float64(within) / n
		a.Within1 = &w
	}
}

// madInterval is the 95% interval of the mean absolute difference of the
// judge's and people's values, each reviewed score one observation.
func madInterval(js, hs []float64) [2]float64 {
	groups := make([][]float64, len(js))
	for i := range js {
		groups[i] = []float64{math.Abs(js[i] - hs[i])}
	}
	c := stats.Clustered(groups)
	return [2]float64{max(c.CILo, 0), c.CIHi}
}
