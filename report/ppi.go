package report

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"slices"

	"assay/stats"
	"assay/store"
	"assay/tally"
)

// MinPPIReviews is the fewest reviewed answers a corrected mean is given for.
const MinPPIReviews = 10

// PPI is a metric's mean under a condition corrected by people's reviews
// (prediction-powered inference): the judge's mean over every answer plus
// the mean of (person − judge) over the answers reviewed in one of the
// review orders, weighted by the probability each sample was drawn with.
type PPI struct {
	Mean     float64    `json:"mean"`
	CI95     [2]float64 `json:"ci95"`
	Reviewed int        `json:"reviewed"` // answers reviewed, of the samples the order drew
	Of       int        `json:"of"`       // answers
	Shift    float64    `json:"shift"`    // how far the reviews move the judge's mean
	// Order is the review order whose first samples were reviewed:
	// "random" (a seeded shuffle) or "active" (drawn where the judge is
	// least certain, with known probabilities).
	Order string `json:"order"`
	// NotUsed counts the answers reviewed outside the order's first
	// samples reviewed whole: picked by hand, they would bias the mean.
	NotUsed int `json:"not_used"`
}

// The review orders, by key.
const (
	OrderRandom = "random"
	OrderActive = "active"
)

// ShufflePlace is a sample's place in its run's seeded shuffle: the random
// review order.
func ShufflePlace(run, sample int64) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%d", run, sample)
	return h.Sum64()
}

// uniformOf is a sample's place in the shuffle as a number in [0, 1).
func uniformOf(run, sample int64) float64 {
	return float64(ShufflePlace(run, sample)>>11) / (1 << 53)
}

// ReviewDesign is how the review orders draw a run's samples: each
// sample's weight in the active order (from the judge's spread on it).
type ReviewDesign struct {
	run     int64
	weights map[int64]float64 // by sample row
}

// ReviewDesign is the report's review design, computed once: the judge's
// spread on a sample is the largest, over conditions and metrics, of the
// standard deviation of its scores (its repetitions' and panel's) on a
// 0–1 scale.
func (r *Report) ReviewDesign() *ReviewDesign {
	return r.Memo("review-design", func() any {
		spread := map[int64]float64{}
		for i, m := range r.Metrics {
			lo, hi := m.Scale.Bounds()
			for _, c := range r.Conditions {
				for _, g := range r.Samples(i, c) {
					_, sd := stats.Describe(g.Values())
					spread[g.SampleRow] = max(spread[g.SampleRow], sd/(hi-lo))
				}
			}
		}
		ids := make([]int64, 0, len(spread))
		for id := range spread {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		values := make([]float64, len(ids))
		for i, id := range ids {
			values[i] = spread[id]
		}
		// A run judging another's answers again draws them as its source
		// does: reviews made in the source's random order count for it.
		d := &ReviewDesign{run: cmp.Or(r.Run.RejudgedFrom, r.Run.ID), weights: make(map[int64]float64, len(ids))}
		for i, w := range stats.ReviewWeights(values) {
			d.weights[ids[i]] = w
		}
		return d
	}).(*ReviewDesign)
}

// key is a sample's key in an order: the first samples drawn are those of
// the smallest keys.
func (d *ReviewDesign) key(order string, sample int64) float64 {
	u := uniformOf(d.run, sample)
	if order == OrderActive {
		return u / d.weight(sample)
	}
	return u
}

func (d *ReviewDesign) weight(sample int64) float64 {
	if w, ok := d.weights[sample]; ok {
		return w
	}
	return 1
}

// Order sorts samples (row ids) in a review order, in place.
func (d *ReviewDesign) Order(order string, samples []int64) {
	keys := make(map[int64]float64, len(samples))
	for _, s := range samples {
		keys[s] = d.key(order, s)
	}
	slices.SortFunc(samples, func(a, b int64) int { return cmp.Or(cmp.Compare(keys[a], keys[b]), cmp.Compare(a, b)) })
}

// Probabilities are the probabilities with which the first m of samples
// (all a metric's samples under a condition) are drawn in an order.
func (d *ReviewDesign) Probabilities(order string, samples []int64, m int) map[int64]float64 {
	weights := make([]float64, len(samples))
	for i, s := range samples {
		weights[i] = 1
		if order == OrderActive {
			weights[i] = d.weight(s)
		}
	}
	out := make(map[int64]float64, len(samples))
	for i, p := range stats.DrawProbabilities(weights, m) {
		out[samples[i]] = p
	}
	return out
}

// answerKey names an answer: a sample's repetition.
type answerKey struct {
	sample int64
	rep    int32
}

// peopleSay is people's value of each answer reviewed under one condition
// and metric: the mean of its scores' latest verdicts.
func peopleSay(m *tally.MetricScores, last map[int64]store.Review) map[answerKey]float64 {
	sum, n := map[answerKey]float64{}, map[answerKey]int{}
	for k, s := range m.Samples {
		for i := m.Starts[k]; i < m.Starts[k+1]; i++ {
			if v, ok := last[m.IDs[i]]; ok {
				a := answerKey{s, m.Reps[i]}
				sum[a] += v.Value
				n[a]++
			}
		}
	}
	for a := range sum {
		sum[a] /= float64(n[a])
	}
	return sum
}

// ppiSample is what the corrected mean needs of one sample: the judge's
// mean over its answers, how many it has and how many were reviewed, and
// people's mean less the judge's over them when all were.
type ppiSample struct {
	row               int64
	judge, residual   float64
	answers, reviewed int
}

// ppiSamples reads each sample's answers under a condition and metric
// (groups as the report combines them) against people's values.
func ppiSamples(groups []SampleScores, people map[answerKey]float64) []ppiSample {
	out := make([]ppiSample, len(groups))
	for gi, g := range groups {
		s := ppiSample{row: g.SampleRow}
		var judged, said float64
		values, start := g.Values(), 0
		for i := 1; i <= len(values); i++ {
			if i < len(values) && g.rep(i) == g.rep(i-1) {
				continue
			}
			f := Mean(values[start:i])
			judged += f
			s.answers++
			if y, ok := people[answerKey{g.SampleRow, g.rep(start)}]; ok {
				said += y - f
				s.reviewed++
			}
			start = i
		}
		s.judge = judged / float64(s.answers)
		if s.reviewed == s.answers {
			s.residual = said / float64(s.answers)
		}
		out[gi] = s
	}
	return out
}

// correctedMean is the prediction-powered mean of a metric under a
// condition; nil under MinPPIReviews answers reviewed.
func (r *Report) correctedMean(mi int, samples []ppiSample) *PPI {
	lo, hi := r.Metrics[mi].Scale.Bounds()
	return r.ReviewDesign().estimate(samples, lo, hi)
}

// estimate is the prediction-powered mean over samples, its interval
// clipped to [lo, hi]: from the review order whose first samples, each
// reviewed whole, hold more answers; nil under MinPPIReviews of them.
func (d *ReviewDesign) estimate(samples []ppiSample, lo, hi float64) *PPI {
	rows := make([]int64, len(samples))
	at := make(map[int64]int, len(samples)) // a sample's place in samples
	answers, reviewed := 0, 0
	for i := range samples {
		rows[i], at[samples[i].row] = samples[i].row, i
		answers += samples[i].answers
		reviewed += samples[i].reviewed
	}
	if reviewed < MinPPIReviews {
		return nil
	}
	var best *PPI
	for _, order := range []string{OrderRandom, OrderActive} {
		sorted := slices.Clone(rows)
		d.Order(order, sorted)
		drawn, used := 0, 0
		for _, row := range sorted {
			s := samples[at[row]]
			if s.reviewed < s.answers {
				break
			}
			drawn++
			used += s.answers
		}
		if used < MinPPIReviews || best != nil && used <= best.Reviewed {
			continue
		}
		p := d.Probabilities(order, rows, drawn)
		units := make([]stats.PPIUnit, len(samples))
		judgeMean := 0.0
		for i, s := range samples {
			units[i] = stats.PPIUnit{Judge: s.judge}
			judgeMean += s.judge / float64(len(samples))
		}
		for _, row := range sorted[:drawn] {
			i := at[row]
			units[i].Reviewed, units[i].Residual, units[i].P = true, samples[i].residual, p[row]
		}
		est := stats.PPIMean(units)
		best = &PPI{Mean: est.Mean, CI95: [2]float64{max(est.Lo, lo), min(est.Hi, hi)}, Reviewed: used, Of: answers,
			Shift: est.Mean - judgeMean, Order: order, NotUsed: reviewed - used}
	}
	return best
}

// CorrectedDiff is B − A on metric mi corrected by reviews, paired by
// sample: over the samples both conditions answered, a sample counting as
// reviewed when both its conditions' answers were, whole; nil under
// MinPPIReviews answers reviewed so.
func (r *Report) CorrectedDiff(mi int, a, b string) *PPI {
	if r.Reviews == nil || r.Reviews.people == nil {
		return nil
	}
	sa := ppiSamples(r.Samples(mi, a), r.Reviews.people[MetricCondition{mi, a}])
	sb := ppiSamples(r.Samples(mi, b), r.Reviews.people[MetricCondition{mi, b}])
	byRow := make(map[int64]ppiSample, len(sa))
	for _, s := range sa {
		byRow[s.row] = s
	}
	var paired []ppiSample
	for _, y := range sb {
		x, ok := byRow[y.row]
		if !ok {
			continue
		}
		d := ppiSample{row: y.row, judge: y.judge - x.judge, answers: x.answers + y.answers}
		if x.reviewed == x.answers && y.reviewed == y.answers {
			d.reviewed, d.residual = d.answers, y.residual-x.residual
		}
		paired = append(paired, d)
	}
	lo, hi := r.Metrics[mi].Scale.Bounds()
	return r.ReviewDesign().estimate(paired, lo-hi, hi-lo)
}

// correctedMeans are the corrected means of every metric under every
// condition with enough answers reviewed. scores are as judged.
func (r *Report) correctedMeans(scores []tally.MetricScores, last map[int64]store.Review) (map[MetricCondition]*PPI, map[MetricCondition]map[answerKey]float64) {
	if len(last) < MinPPIReviews {
		return nil, nil
	}
	out, people := map[MetricCondition]*PPI{}, map[MetricCondition]map[answerKey]float64{}
	for k := range scores {
		m := &scores[k]
		mi := r.MetricIndex(m.Evaluator, m.Metric)
		if mi < 0 {
			continue
		}
		said := peopleSay(m, last)
		people[MetricCondition{mi, m.Condition}] = said
		if p := r.correctedMean(mi, ppiSamples(r.Samples(mi, m.Condition), said)); p != nil {
			out[MetricCondition{mi, m.Condition}] = p
		}
	}
	return out, people
}

// withCorrected is the summary with each metric's corrected mean: a copy
// where there are any, since a summary is shared by the views of a report.
func (s *Summary) withCorrected(r *Report, corrected map[MetricCondition]*PPI) *Summary {
	if s == nil || len(corrected) == 0 && !s.corrected() {
		return s
	}
	c := *s
	set := func(conds []ConditionSummary) []ConditionSummary {
		conds = slices.Clone(conds)
		for ci := range conds {
			cs := &conds[ci]
			cs.Metrics = slices.Clone(cs.Metrics)
			for mi := range cs.Metrics {
				m := &cs.Metrics[mi]
				m.PPI = corrected[MetricCondition{r.MetricIndex(m.Evaluator, m.Name), cs.Name}]
			}
		}
		return conds
	}
	c.Conditions = set(s.Conditions)
	if s.byModel != nil {
		c.byModel = slices.Clone(s.byModel)
		for i := range c.byModel {
			c.byModel[i].Models = set(c.byModel[i].Models)
		}
	}
	return &c
}

// corrected reports whether any metric of the summary has a corrected mean.
func (s *Summary) corrected() bool {
	for _, c := range s.Conditions {
		for _, m := range c.Metrics {
			if m.PPI != nil {
				return true
			}
		}
	}
	return false
}

// NextAnswer is a score to review next, with the probability its sample
// is drawn with once the samples before it in the order are reviewed.
type NextAnswer struct {
	ScoreID     int64   `json:"score_id"`
	SampleRow   int64   `json:"sample_row_id"`
	Condition   string  `json:"condition"`
	Repetition  int     `json:"repetition"`
	Evaluator   string  `json:"evaluator"`
	Metric      string  `json:"metric"`
	Probability float64 `json:"probability"`
}

// ReviewNext lists up to n scores nobody has reviewed (reviewed holds
// those somebody has), sample after sample in a review order.
func (r *Report) ReviewNext(order string, reviewed map[int64]bool, n int) []NextAnswer {
	bySample := map[int64][]NextAnswer{}
	for k := range r.read.data.Scores {
		m := &r.read.data.Scores[k]
		for si, s := range m.Samples {
			for i := m.Starts[si]; i < m.Starts[si+1]; i++ {
				if !reviewed[m.IDs[i]] {
					bySample[s] = append(bySample[s], NextAnswer{ScoreID: m.IDs[i], SampleRow: s, Condition: m.Condition,
						Repetition: int(m.Reps[i]), Evaluator: m.Evaluator, Metric: m.Metric})
				}
			}
		}
	}
	d := r.ReviewDesign()
	rows := d.samples()
	sorted := slices.Clone(rows)
	d.Order(order, sorted)
	var out []NextAnswer
	for k, row := range sorted {
		if len(out) >= n {
			break
		}
		todo := bySample[row]
		if len(todo) == 0 {
			continue
		}
		p := d.Probabilities(order, rows, k+1)[row]
		slices.SortFunc(todo, func(a, b NextAnswer) int {
			return cmp.Or(cmp.Compare(a.Condition, b.Condition), cmp.Compare(a.Repetition, b.Repetition), cmp.Compare(a.ScoreID, b.ScoreID))
		})
		for _, a := range todo[:min(len(todo), n-len(out))] {
			a.Probability = p
			out = append(out, a)
		}
	}
	return out
}

// samples are the samples the design draws from, by row id.
func (d *ReviewDesign) samples() []int64 {
	rows := make([]int64, 0, len(d.weights))
	for row := range d.weights {
		rows = append(rows, row)
	}
	slices.Sort(rows)
	return rows
}

// Answer names one answer's scores on a metric: a sample's repetition
// under a condition.
type Answer struct {
	Metric    int // its place in the report's metrics
	Condition string
	Sample    int64
	Rep       int32
}

// AnswerMeans is each answer's mean score on each metric, its panel's
// combined as the report combines them.
func (r *Report) AnswerMeans() map[Answer]float64 {
	out := map[Answer]float64{}
	for mi := range r.Metrics {
		for _, c := range r.Conditions {
			for _, g := range r.Samples(mi, c) {
				values, start := g.Values(), 0
				for i := 1; i <= len(values); i++ {
					if i < len(values) && g.rep(i) == g.rep(i-1) {
						continue
					}
					out[Answer{mi, c, g.SampleRow, g.rep(start)}] = Mean(values[start:i])
					start = i
				}
			}
		}
	}
	return out
}
