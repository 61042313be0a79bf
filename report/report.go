// Package report computes everything a run's report shows — the summary per
// condition and metric, each sample's scores, the paired comparison of two
// conditions and the data of every chart — from the rows the store reads.
// Pages, `assay run`'s summary, the JSON API and every export render what
// it computes; none computes a figure of its own.
package report

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"

	"golang.org/x/sync/errgroup"

	"assay"
	"assay/config"
	"assay/stats"
	"assay/stop"
	"assay/store"
	"assay/tally"
)

// SampleScores are one sample's scores for one metric under one condition:
// every repetition (and judge repetition).
type SampleScores struct {
	SampleRow int64 // the sample's row id
	// The scores are [at, at+n) of the metric's columns, shared by its
	// groups: 150,000 groups each with slices of their own took 12 MB of
	// a large run's report.
	cols  *tally.MetricScores
	at, n int32
}

// Values are every score of the sample, every repetition's (and judge
// repetition's): those of one answer are together. They share the
// report's memory, capped: appending copies them.
func (g SampleScores) Values() []float64 {
	if g.cols == nil {
		return nil
	}
	return g.cols.Values[g.at : g.at+g.n : g.at+g.n]
}

// rep is the repetition of score i: the answer it scores.
func (g SampleScores) rep(i int) int32 { return g.cols.Reps[int(g.at)+i] }

// judge is the panel place of score i's judge.
func (g SampleScores) judge(i int) int8 { return g.cols.Judges[int(g.at)+i] }

// JudgeAnswers are the sample's scores by answer and judge: what one judge
// of the panel gave one answer over its repetitions. They share Values's
// memory, capped: appending to one copies it.
func (g SampleScores) JudgeAnswers() [][]float64 { return g.runs(true) }

// Answers are the sample's scores by answer (repetition): one score per
// judge repetition and panel judge, or one for a deterministic evaluator.
// They share Values's memory, capped: appending to one copies it.
func (g SampleScores) Answers() [][]float64 { return g.runs(false) }

// runs cuts Values into answers, and by judge too when byJudge.
func (g SampleScores) runs(byJudge bool) [][]float64 {
	n := 0
	g.eachRun(byJudge, func([]float64) { n++ })
	out := make([][]float64, 0, n)
	g.eachRun(byJudge, func(v []float64) { out = append(out, v) })
	return out
}

// eachRun calls fn with each answer's values, or each answer's values by
// one judge when byJudge, in order; they share Values's memory, capped.
func (g SampleScores) eachRun(byJudge bool, fn func([]float64)) {
	values, start := g.Values(), 0
	for i := 1; i <= len(values); i++ {
		if i == len(values) || g.rep(i) != g.rep(i-1) || byJudge && g.judge(i) != g.judge(i-1) {
			fn(values[start:i:i])
			start = i
		}
	}
}

// Report is a run's report, computed from its stored scores. Reports are
// shared between requests: nothing may change one once built.
type Report struct {
	Run        *store.Run
	Dataset    *store.Dataset
	Config     *config.Config // as stored, references as written
	Summary    *Summary
	Conditions []string         // in the run's order
	Metrics    []Metric         // in report order (see Order)
	Models     []tally.ModelUse // the models that answered, and where their cost came from
	View       View             // as judged, or with reviews applied
	Judge      string           // the panel judge whose scores alone it shows; "" for the whole panel
	Reviews    *Reviews         // coverage and judge–human agreement
	// samples[metric][condition] lists the samples with scores, by row id:
	// for a panel, its scores of an answer combined as the run says (Mode).
	samples []map[string][]SampleScores
	// raw is samples with every judge's every score, for a panel; samples
	// itself otherwise.
	raw  []map[string][]SampleScores
	read read // what it was computed from

	scoresOf     *Report // the report whose scores it shares, with other verdicts (WithReviews)
	allPairsOnce sync.Once
	allPairs     []PairTest // every pair's test, computed once for every view of the report
	compareMu    sync.Mutex
	compared     map[[2]string]*pairOnce // the paired comparisons views asked for
	memoMu       sync.Mutex
	memo         map[string]*memoOnce // what views derive from the report, by key
}

// memoOnce is one value derived from a report, computed once.
type memoOnce struct {
	once sync.Once
	v    any
}

// Memo returns what f computes from the report, computed once per key: a
// report never changes, and every view of it (a page, a refresh, the
// export) asks again for the same charts and tables.
func (r *Report) Memo(key string, f func() any) any {
	r.memoMu.Lock()
	if r.memo == nil {
		r.memo = map[string]*memoOnce{}
	}
	m, ok := r.memo[key]
	if !ok {
		m = &memoOnce{}
		r.memo[key] = m
	}
	r.memoMu.Unlock()
	m.once.Do(func() { m.v = f() })
	return m.v
}

// Load reads a run, its dataset and its stored config, and computes its report.
func Load(ctx context.Context, db *store.DB, runID int64) (*Report, error) {
	run, err := db.Run(ctx, runID)
	if err != nil {
		return nil, err
	}
	ds, err := db.Dataset(ctx, run.DatasetID)
	if err != nil {
		return nil, err
	}
	return Build(ctx, db, run, ds, run.Config)
}

// Build computes the report of a run already read, as judged.
func Build(ctx context.Context, db *store.DB, run *store.Run, ds *store.Dataset, cfg *config.Config) (*Report, error) {
	return BuildView(ctx, db, run, ds, cfg, AsJudged)
}

// BuildView computes the report of a run already read, in the view given.
func BuildView(ctx context.Context, db *store.DB, run *store.Run, ds *store.Dataset, cfg *config.Config, view View) (*Report, error) {
	return BuildJudge(ctx, db, run, ds, cfg, view, "")
}

// BuildJudge computes the report of a run as one judge of its panel scored
// it: that judge's scores alone, as if it had been the run's one judge.
// judge "" is the whole panel; a name the panel lacks is an EINVALID error.
func BuildJudge(ctx context.Context, db *store.DB, run *store.Run, ds *store.Dataset, cfg *config.Config, view View, judge string) (*Report, error) {
	return BuildWith(ctx, db, run, ds, cfg, view, judge, nil)
}

// BuildWith is BuildJudge with the run's verdicts already read (the server
// keeps them), oldest first for each score; nil reads them.
func BuildWith(ctx context.Context, db *store.DB, run *store.Run, ds *store.Dataset, cfg *config.Config, view View, judge string,
	verdicts []store.Review) (*Report, error) {
	place := -1
	if judge != "" {
		for i, j := range cfg.Judges {
			if j.Name == judge {
				place = i
			}
		}
		if place < 0 || len(cfg.Judges) < 2 {
			return nil, assay.Errorf(assay.EINVALID, "This run has no panel judge %q.", judge)
		}
		one := *cfg
		one.Judge, one.Judges = cfg.Judges[place], nil
		cfg = &one
	}
	var data *tally.ReportData
	var sliceValues map[int64]string
	g, gctx := errgroup.WithContext(ctx)
	if field := cfg.Report.SliceBy; field != "" {
		g.Go(func() (err error) {
			sliceValues, err = db.SliceValues(gctx, run.DatasetID, field)
			return err
		})
	}
	g.Go(func() (err error) {
		data, err = tally.Of(db).ReportData(gctx, run.ID)
		return err
	})
	if verdicts == nil {
		g.Go(func() (err error) {
			verdicts, err = db.ScoreReviews(gctx, run.ID)
			return err
		})
	}
	var batches *batchesRead
	if cfg.Batch != nil {
		g.Go(func() (err error) {
			batches, err = readBatches(gctx, db, run.ID)
			return err
		})
	}
	var stopping *stop.Figures
	if cfg.Stop != nil {
		g.Go(func() (err error) {
			stopping, err = stop.Of(gctx, db, run, cfg)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if place >= 0 {
		for i := range data.Scores {
			data.Scores[i] = onlyJudge(data.Scores[i], place)
		}
	}
	return compute(run, ds, cfg, view, judge, read{data, sliceValues, stopping, batches}, verdicts), nil
}

// read is what a report is computed from, as the store read it: kept
// with the report, which verdicts given since compute again in a view.
type read struct {
	data        *tally.ReportData // the scores as judged (the one judge's, for a panel judge's report)
	sliceValues map[int64]string  // by sample row, when the report is sliced
	stopping    *stop.Figures     // the stopping rule's, for a run with one
	batches     *batchesRead      // for a run whose calls went in batches
}

// compute computes a report from what was read, and the run's verdicts.
func compute(run *store.Run, ds *store.Dataset, cfg *config.Config, view View, judge string, in read, verdicts []store.Review) *Report {
	data := in.data
	r := &Report{Run: run, Dataset: ds, Config: cfg, Models: data.Models, View: view, Judge: judge, read: in}
	for _, c := range run.Conditions {
		r.Conditions = append(r.Conditions, c.Name)
	}
	judged, scores := data.Scores, data.Scores
	if view == Reviewed && len(verdicts) > 0 {
		scores = applyReviews(data.Scores, latest(verdicts))
	}
	r.group(scores)
	var wg sync.WaitGroup
	wg.Go(func() { r.Reviews = r.reviews(judged, verdicts) })
	if len(r.Conditions) >= 2 {
		wg.Go(func() { r.Compare(r.Conditions[0], r.Conditions[1]) }) // the pair a report shows first
	}
	r.Summary = r.summarize(data.Conditions, data.TopErrors)
	r.Summary.stopped(in.stopping)
	r.Summary.countBatched(in.batches)
	r.Summary.SameFamily = SameFamilies(cfg)
	if field := cfg.Report.SliceBy; field != "" {
		r.Summary.SliceBy, r.Summary.Slices = field, r.Slices(in.sliceValues)
	}
	wg.Wait()
	r.Summary = r.Summary.withCorrected(r, r.Reviews.Corrected)
	return r
}

// WithReviews is the report in a view, computed again from the scores it
// read with another set of the run's verdicts (oldest first for each
// score), without reading the store. A report of 150,000 results with
// 34,000 verdicts took 0.35–0.45 s to compute again after each verdict.
// As judged, a verdict changes no score: all but the reviews is the
// report's own, and what views derived from it is kept.
func (r *Report) WithReviews(view View, verdicts []store.Review) *Report {
	if view != AsJudged || r.View != AsJudged {
		return compute(r.Run, r.Dataset, r.Config, view, r.Judge, r.read, verdicts)
	}
	n := &Report{Run: r.Run, Dataset: r.Dataset, Config: r.Config, Summary: r.Summary, Conditions: r.Conditions,
		Metrics: r.Metrics, Models: r.Models, View: r.View, Judge: r.Judge, samples: r.samples, raw: r.raw, read: r.read,
		scoresOf: cmp.Or(r.scoresOf, r)}
	n.Reviews = n.reviews(r.read.data.Scores, verdicts)
	n.Summary = r.Summary.withCorrected(n, n.Reviews.Corrected)
	r.compareMu.Lock()
	n.compared = maps.Clone(r.compared)
	r.compareMu.Unlock()
	r.memoMu.Lock()
	n.memo = maps.Clone(r.memo)
	r.memoMu.Unlock()
	return n
}

// group cuts each metric's scores under each condition, as the store
// gives them, into per-sample groups that share their columns, and names
// the run's metrics.
func (r *Report) group(scores []tally.MetricScores) {
	index := map[[2]string]int{}
	var samples []map[string][]SampleScores
	for _, m := range scores {
		if len(m.Samples) == 0 {
			continue // every score left out: a panel judge's view of another's metric
		}
		key := [2]string{m.Evaluator, m.Metric}
		i, ok := index[key]
		if !ok {
			i = len(r.Metrics)
			index[key] = i
			r.Metrics = append(r.Metrics, Metric{Evaluator: m.Evaluator, Name: m.Metric})
			samples = append(samples, map[string][]SampleScores{})
		}
		samples[i][m.Condition] = sampleGroups(m)
	}
	for i := range r.Metrics {
		r.Metrics[i].Scale = r.metricScale(r.Metrics[i], samples[i])
	}
	ordered := slices.Clone(r.Metrics)
	Order(r.Config.Evaluators, ordered)
	r.raw = make([]map[string][]SampleScores, len(ordered))
	for i, m := range ordered {
		r.raw[i] = samples[index[[2]string{m.Evaluator, m.Name}]]
	}
	r.Metrics = ordered
	r.samples = r.raw
	if len(r.Config.Judges) > 1 && r.Config.Mode() != config.PanelMean {
		r.samples = r.combinedPanel()
	}
}

// sampleGroups cuts a metric's scores under a condition into per-sample
// groups; the groups keep the columns they read, not the scores' ids.
func sampleGroups(m tally.MetricScores) []SampleScores {
	cols := &tally.MetricScores{Values: m.Values, Reps: m.Reps, Judges: m.Judges}
	groups := make([]SampleScores, len(m.Samples))
	for k, row := range m.Samples {
		lo, hi := m.Starts[k], m.Starts[k+1]
		groups[k] = SampleScores{SampleRow: row, cols: cols, at: lo, n: hi - lo}
	}
	return groups
}

// metricScale is a metric's scale: as the run file gives it, or as its
// scores show it.
func (r *Report) metricScale(m Metric, byCondition map[string][]SampleScores) config.Scale {
	if sc, ok := r.Config.MetricScale(m.Evaluator, m.Name); ok {
		return sc
	}
	return scaleOf(func(yield func(float64) bool) {
		for _, groups := range byCondition {
			for _, g := range groups {
				for _, v := range g.Values() {
					if !yield(v) {
						return
					}
				}
			}
		}
	})
}

// combinedPanel is each sample's scores with a panel's judges combined
// as the run's panel mode says.
func (r *Report) combinedPanel() []map[string][]SampleScores {
	combined := make([]map[string][]SampleScores, len(r.raw))
	for i, byCondition := range r.raw {
		combined[i] = map[string][]SampleScores{}
		for c, groups := range byCondition {
			out, cols := make([]SampleScores, len(groups)), &tally.MetricScores{}
			for k, g := range groups {
				out[k] = combinePanel(g, r.Config.Mode(), cols)
			}
			combined[i][c] = out
		}
	}
	return combined
}

// onlyJudge keeps the scores of the panel judge at place, and a
// deterministic evaluator's, which have no judge.
func onlyJudge(m tally.MetricScores, place int) tally.MetricScores {
	out := m
	out.Samples, out.Starts, out.IDs, out.Values, out.Reps, out.Judges, out.JudgeReps = nil, nil, nil, nil, nil, nil, nil
	for k, row := range m.Samples {
		start := int32(len(out.Values))
		for i := m.Starts[k]; i < m.Starts[k+1]; i++ {
			if m.Judged(int(i)) && int(m.Judges[i]) != place {
				continue
			}
			out.IDs, out.Values = append(out.IDs, m.IDs[i]), append(out.Values, m.Values[i])
			out.Reps, out.Judges, out.JudgeReps = append(out.Reps, m.Reps[i]), append(out.Judges, m.Judges[i]), append(out.JudgeReps, m.JudgeReps[i])
		}
		if int32(len(out.Values)) > start {
			out.Samples, out.Starts = append(out.Samples, row), append(out.Starts, start)
		}
	}
	out.Starts = append(out.Starts, int32(len(out.Values)))
	return out
}

// Raw are the score groups of metric m under condition c with every
// judge's every score: the same as Samples but for a panel combined by
// median or first.
func (r *Report) Raw(m int, c string) []SampleScores { return r.raw[m][c] }

// combinePanel makes one sample's headline scores from a panel's: per
// answer, the first judge's scores, or the median of the judges' means.
// They are added to cols, which the groups of one condition share.
func combinePanel(g SampleScores, mode string, cols *tally.MetricScores) SampleScores {
	values := g.Values()
	at := int32(len(cols.Values))
	add := func(v float64, rep int32) {
		cols.Values, cols.Reps, cols.Judges = append(cols.Values, v), append(cols.Reps, rep), append(cols.Judges, 0)
	}
	for start := 0; start < len(values); {
		end := start
		for end < len(values) && g.rep(end) == g.rep(start) {
			end++
		}
		rep := g.rep(start)
		switch mode {
		case config.PanelFirst:
			for k := start; k < end; k++ {
				if g.judge(k) == 0 {
					add(values[k], rep)
				}
			}
		default: // median of the judges' means
			sums, counts := map[int8]float64{}, map[int8]int{}
			for k := start; k < end; k++ {
				sums[g.judge(k)] += values[k]
				counts[g.judge(k)]++
			}
			var means []float64
			for j, s := range sums {
				means = append(means, s/float64(counts[j]))
			}
			slices.Sort(means)
			med := means[len(means)/2]
			if len(means)%2 == 0 {
				med = (means[len(means)/2-1] + med) / 2
			}
			add(med, rep)
		}
		start = end
	}
	return SampleScores{SampleRow: g.SampleRow, cols: cols, at: at, n: int32(len(cols.Values)) - at}
}

// Samples are the score groups of metric m under condition c, by row id.
func (r *Report) Samples(m int, c string) []SampleScores { return r.samples[m][c] }

// Means returns each sample's mean score for metric m under condition c, by
// row id. It is computed once per report: a caller must not change it.
func (r *Report) Means(m int, c string) map[int64]float64 {
	return r.Memo(fmt.Sprintf("means\x00%d\x00%s", m, c), func() any {
		t := r.meanTable(m, c)
		out := make(map[int64]float64, len(t.ids))
		for i, id := range t.ids {
			out[id] = t.means[i]
		}
		return out
	}).(map[int64]float64)
}

// sampleMeans are each sample's mean score for one metric under one
// condition, by row id, in the order of the ids.
type sampleMeans struct {
	ids   []int64
	means []float64
}

// meanTable is Means as a table ordered by row id, computed once per report.
func (r *Report) meanTable(m int, c string) *sampleMeans {
	return r.Memo(fmt.Sprintf("mean table\x00%d\x00%s", m, c), func() any {
		groups := r.samples[m][c]
		t := &sampleMeans{ids: make([]int64, len(groups)), means: make([]float64, len(groups))}
		if !slices.IsSortedFunc(groups, func(a, b SampleScores) int { return cmp.Compare(a.SampleRow, b.SampleRow) }) {
			groups = slices.SortedFunc(slices.Values(groups), func(a, b SampleScores) int { return cmp.Compare(a.SampleRow, b.SampleRow) })
		}
		for i, g := range groups {
			t.ids[i], t.means[i] = g.SampleRow, Mean(g.Values())
		}
		return t
	}).(*sampleMeans)
}

// pairTables lines up, by row id, the samples present in both tables.
func pairTables(a, b *sampleMeans) (xa, xb []float64) {
	n := min(len(a.ids), len(b.ids))
	xa, xb = make([]float64, 0, n), make([]float64, 0, n)
	for i, k := 0, 0; i < len(a.ids) && k < len(b.ids); {
		switch {
		case a.ids[i] < b.ids[k]:
			i++
		case a.ids[i] > b.ids[k]:
			k++
		default:
			xa, xb = append(xa, a.means[i]), append(xb, b.means[k])
			i++
			k++
		}
	}
	return xa, xb
}

// Quality is a condition's mean of its metric means, each rescaled to 0–1;
// ok is false when it has no score.
func (r *Report) Quality(cs ConditionSummary) (q float64, ok bool) {
	if len(cs.Metrics) == 0 {
		return 0, false
	}
	var sum float64
	for _, m := range cs.Metrics {
		sum += r.Metrics[r.MetricIndex(m.Evaluator, m.Name)].Scale.Unit(m.Mean)
	}
	return sum / float64(len(cs.Metrics)), true
}

// MetricIndex is the place of a metric in Metrics, or -1.
func (r *Report) MetricIndex(evaluator, name string) int {
	return slices.IndexFunc(r.Metrics, func(m Metric) bool { return m.Evaluator == evaluator && m.Name == name })
}

// HasCondition reports whether the run has a condition of that name.
func (r *Report) HasCondition(name string) bool { return slices.Contains(r.Conditions, name) }

// Mean is the mean of v (0 for none).
func Mean(v []float64) float64 {
	m, _ := stats.Describe(v)
	return m
}
