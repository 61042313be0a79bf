// Package stop decides when a run with a stopping rule knows its answer.
// The run takes its samples in a seeded random order (Order), whole
// samples at a time; a Tracker takes each result as it is saved, and adds
// a sample to its confidence sequences once it and every sample before it
// in that order are complete, so what the sequences see, and in what
// order, does not depend on which answers came back first.
package stop

import (
	"context"
	"fmt"
	"math/rand/v2"

	"assay/config"
	"assay/stats"
	"assay/store"
)

// Order is the order a run with a stopping rule takes its n samples in:
// their places in the dataset, shuffled by seed (Fisher–Yates over PCG).
func Order(n int, seed uint64) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	rng := rand.New(rand.NewPCG(seed, 0x6173736179)) // "assay"
	for i := n - 1; i > 0; i-- {
		j := int(rng.Uint64N(uint64(i + 1)))
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// Value is a result's value of a metric: the mean of its judgements'
// scores of it (judge repetitions and panel judges alike); false when it
// has none.
func Value(res *store.Result, metric string) (float64, bool) {
	sum, n := 0.0, 0
	for _, j := range res.Judgements {
		if j.Error != "" {
			continue
		}
		for _, s := range j.Scores {
			if s.Metric == metric {
				sum += s.Value
				n++
			}
		}
	}
	if n == 0 {
		return 0, false
	}
	return sum / float64(n), true
}

// Interval is a confidence sequence's interval at a look, in the metric's
// units: for a condition's mean, or for the difference of a pair's means
// (Condition minus Versus) on the samples both have.
type Interval struct {
	Condition string  `json:"condition"`
	Versus    string  `json:"versus,omitempty"`
	Samples   int     `json:"samples"`
	Mean      float64 `json:"mean"`
	Lo        float64 `json:"lo"`
	Hi        float64 `json:"hi"`
}

// Tracker keeps a run's confidence sequences on its stopping rule's metric.
type Tracker struct {
	rule       config.Stop
	metric     config.MetricRef
	lo, width  float64 // the metric's scale, to rescale to 0–1
	conditions []string
	perSample  int   // tasks of a sample: conditions × repetitions
	order      []int // places of the samples, in the run's order
	got        map[int]*sample
	next       int // the place in order of the next sample to add
	added      int

	// At the rule's α, shared among the conditions (precise) or the
	// pairs (decided); and at 95% each, for the report.
	means, means95 []*stats.Sequence
	pairs, pairs95 []*stats.PairedSequence
	pairOf         [][2]int
}

type sample struct {
	tasks int
	sum   []float64 // per condition, of its results' values
	n     []int
}

// NewTracker starts the sequences of a run: its rule, the metric it
// watches, its conditions, repetitions and sample order.
func NewTracker(rule config.Stop, metric config.MetricRef, conditions []string, repetitions int, order []int) *Tracker {
	lo, hi := metric.Scale.Bounds()
	t := &Tracker{rule: rule, metric: metric, lo: lo, width: hi - lo, conditions: conditions,
		perSample: len(conditions) * max(repetitions, 1), order: order, got: map[int]*sample{}}
	for i := range conditions {
		for j := i + 1; j < len(conditions); j++ {
			t.pairOf = append(t.pairOf, [2]int{i, j})
		}
	}
	shared := len(conditions)
	if rule.When == config.StopDecided {
		shared = max(len(t.pairOf), 1)
	}
	alpha := rule.Level() / float64(shared)
	for range conditions {
		t.means = append(t.means, stats.NewSequence(alpha))
	}
	for range t.pairOf {
		t.pairs = append(t.pairs, stats.NewPairedSequence(alpha))
	}
	t.means95, t.pairs95 = t.means, t.pairs // the same, at 95%
	if alpha != 0.05 {
		t.means95, t.pairs95 = nil, nil
		for range conditions {
			t.means95 = append(t.means95, stats.NewSequence(0.05))
		}
		for range t.pairOf {
			t.pairs95 = append(t.pairs95, stats.NewPairedSequence(0.05))
		}
	}
	return t
}

// Add takes a result of the sample at place at, under condition.
func (t *Tracker) Add(at int, condition string, res *store.Result) {
	ci := -1
	for i, c := range t.conditions {
		if c == condition {
			ci = i
		}
	}
	if ci < 0 {
		return
	}
	s := t.got[at]
	if s == nil {
		s = &sample{sum: make([]float64, len(t.conditions)), n: make([]int, len(t.conditions))}
		t.got[at] = s
	}
	s.tasks++
	if v, ok := Value(res, t.metric.Name); ok {
		s.sum[ci] += (v - t.lo) / t.width
		s.n[ci]++
	}
	for t.next < len(t.order) {
		s := t.got[t.order[t.next]]
		if s == nil || s.tasks < t.perSample {
			break
		}
		t.add(s)
		delete(t.got, t.order[t.next])
		t.next++
	}
}

// add puts a complete sample into the sequences: each condition's mean of
// its repetitions; a condition with no value leaves the sample out of its
// sequence and its pairs'.
func (t *Tracker) add(s *sample) {
	t.added++
	mean := func(i int) float64 { return s.sum[i] / float64(s.n[i]) }
	for i := range t.conditions {
		if s.n[i] > 0 {
			t.means[i].Add(mean(i))
			if t.means95[i] != t.means[i] {
				t.means95[i].Add(mean(i))
			}
		}
	}
	for k, p := range t.pairOf {
		if s.n[p[0]] > 0 && s.n[p[1]] > 0 {
			t.pairs[k].Add(mean(p[0]), mean(p[1]))
			if t.pairs95[k] != t.pairs[k] {
				t.pairs95[k].Add(mean(p[0]), mean(p[1]))
			}
		}
	}
}

// Samples is how many samples the sequences hold: the complete ones, in
// the run's order, up to the first that is not.
func (t *Tracker) Samples() int { return t.added }

// Decided says whether the rule is met, and how.
func (t *Tracker) Decided() (bool, string) {
	if t.added < t.rule.Least() {
		return false, ""
	}
	alpha := fmt.Sprintf("α = %g", t.rule.Level())
	switch t.rule.When {
	case config.StopDecided:
		return t.pairsDecided(alpha)
	case config.StopPrecise:
		return t.meansPrecise(alpha)
	}
	return false, ""
}

// pairsDecided says whether every pair of conditions differs, or is
// within the rule's margin.
func (t *Tracker) pairsDecided(alpha string) (bool, string) {
	if len(t.pairOf) == 0 {
		return false, ""
	}
	margin := t.rule.Margin / t.width
	same, differ := 0, 0
	for _, p := range t.pairs {
		lo, hi := p.Interval()
		switch {
		case p.N() == 0:
			return false, ""
		case lo > 0 || hi < 0:
			differ++
		case margin > 0 && lo > -margin && hi < margin:
			same++
		default:
			return false, ""
		}
	}
	why := fmt.Sprintf("every pair of conditions decided on %s (%s", t.metric.Name, alpha)
	if len(t.pairOf) > 1 {
		why += fmt.Sprintf(", shared among %d pairs", len(t.pairOf))
	}
	why += fmt.Sprintf("): %d differ", differ)
	if t.rule.Margin > 0 {
		why += fmt.Sprintf(", %d within ±%g", same, t.rule.Margin)
	}
	return true, why
}

// meansPrecise says whether every condition's mean is known within the
// rule's half-width.
func (t *Tracker) meansPrecise(alpha string) (bool, string) {
	half := t.rule.HalfWidth / t.width
	for _, m := range t.means {
		lo, hi := m.Interval()
		if m.N() == 0 || (hi-lo)/2 > half {
			return false, ""
		}
	}
	why := fmt.Sprintf("every condition's %s known within ±%g (%s", t.metric.Name, t.rule.HalfWidth, alpha)
	if len(t.conditions) > 1 {
		why += fmt.Sprintf(", shared among %d conditions", len(t.conditions))
	}
	return true, why + ")"
}

// Intervals95 are the 95% anytime-valid intervals of each condition's
// mean and each pair's difference, in the metric's units.
func (t *Tracker) Intervals95() []Interval {
	var out []Interval
	scale := func(u float64) float64 { return t.lo + u*t.width }
	for i, c := range t.conditions {
		s := t.means95[i]
		if s.N() == 0 {
			continue
		}
		lo, hi := s.Interval()
		out = append(out, Interval{Condition: c, Samples: s.N(), Mean: scale(s.Mean()), Lo: scale(lo), Hi: scale(hi)})
	}
	for k, p := range t.pairOf {
		s := t.pairs95[k]
		if s.N() == 0 {
			continue
		}
		lo, hi := s.Interval()
		out = append(out, Interval{Condition: t.conditions[p[0]], Versus: t.conditions[p[1]], Samples: s.N(),
			Mean: s.Mean() * t.width, Lo: lo * t.width, Hi: hi * t.width})
	}
	return out
}

// Figures are what a report shows of a run with a stopping rule.
type Figures struct {
	Rule      config.Stop    `json:"rule"`
	Stopped   *store.RunStop `json:"stopped,omitempty"` // nil: not stopped early
	Samples   int            `json:"samples"`           // in the sequences
	Intervals []Interval     `json:"cs95"`              // 95% anytime-valid
	Decided   bool           `json:"decided"`           // the rule is met now
	Metric    string         `json:"metric"`
}

// Replay builds a run's tracker again from the results it has saved, as
// the run's own did, in the run's order: runs resumed and reports alike.
// refs are the dataset's samples in file order; cfg the run's config.
func Replay(ctx context.Context, db *store.DB, run *store.Run, cfg *config.Config, refs []store.SampleRef) (*Tracker, map[int64]int, error) {
	metric, err := cfg.StopMetric()
	if err != nil {
		return nil, nil, err
	}
	names := make([]string, len(run.Conditions))
	for i, c := range run.Conditions {
		names[i] = c.Name
	}
	place := make(map[int64]int, len(refs))
	for i, r := range refs {
		place[r.ID] = i
	}
	t := NewTracker(*cfg.Stop, metric, names, run.Repetitions, Order(len(refs), uint64(cfg.Stop.Seed)))
	err = db.EachScored(ctx, run.ID, func(res *store.Result) error {
		if at, ok := place[res.SampleRow]; ok {
			t.Add(at, res.Condition, res)
		}
		return nil
	})
	return t, place, err
}

// Of is the figures of a run with a stopping rule; nil for a run without.
func Of(ctx context.Context, db *store.DB, run *store.Run, cfg *config.Config) (*Figures, error) {
	if cfg == nil || cfg.Stop == nil {
		return nil, nil
	}
	refs, err := db.SampleRefs(ctx, run.DatasetID)
	if err != nil {
		return nil, err
	}
	t, _, err := Replay(ctx, db, run, cfg, refs)
	if err != nil {
		return nil, err
	}
	st, err := db.RunStopOf(ctx, run.ID)
	if err != nil {
		return nil, err
	}
	decided, _ := t.Decided()
	return &Figures{Rule: *cfg.Stop, Stopped: st, Samples: t.Samples(), Intervals: t.Intervals95(), Decided: decided,
		Metric: t.metric.Name}, nil
}

// Order is the tracker's sample order.
func (t *Tracker) Order() []int { return t.order }
