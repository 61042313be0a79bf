package report

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"assay"
	"assay/config"
	"assay/stats"
	"assay/stop"
	"assay/store"
	"assay/tally"
)

// Summary is what a run measured, per condition and metric. Its JSON is what
// `assay run --json` prints and GET /api/runs/:id returns: scripts rely on
// its keys.
type Summary struct {
	RunID         int64           `json:"run_id"`
	Name          string          `json:"name"`
	Status        store.RunStatus `json:"status"`
	Message       string          `json:"message,omitempty"`
	DatasetSHA256 string          `json:"dataset_sha256"`
	TotalTasks    int             `json:"total_tasks"`
	// RejudgedFrom is the run whose answers this run judged again.
	RejudgedFrom int64              `json:"rejudged_from,omitempty"`
	Results      int                `json:"results"`
	Errors       int                `json:"errors"`
	CostUSD      float64            `json:"cost_usd"`
	Conditions   []ConditionSummary `json:"conditions"`
	// SliceBy and Slices break the metrics down by a metadata field, when
	// the run file names one (report: {slice_by: FIELD}).
	SliceBy string  `json:"slice_by,omitempty"`
	Slices  []Slice `json:"slices,omitempty"`
	// Stopped says how a run with a stopping rule stopped before its
	// plan's end; null when the plan ran out. Stopping is the rule, the
	// samples its sequences hold and their intervals, pairs' included.
	Stopped  *Stopped      `json:"stopped"`
	Stopping *stop.Figures `json:"stopping,omitempty"`
	// SameFamily lists each judge of the family of an agent model it
	// judges (Family): its scores of that model may favour it.
	SameFamily []SameFamily `json:"judge_same_family,omitempty"`
	// Batches are the batches the run's judge calls went in, for a run
	// whose judge calls go in batches.
	Batches []Batch `json:"batches,omitempty"`
	// byModel is Conditions of a run over several models as its JSON gives
	// them: each of the run file's conditions, its figures over every
	// model, and under "models" each model's.
	byModel []ConditionSummary
}

// Stopped is how a run stopped early, as `assay run --json` gives it.
type Stopped struct {
	Reason       string  `json:"reason"`
	DecidedAfter int     `json:"decided_after,omitempty"` // whole samples the rule had seen when it held
	AfterSamples int     `json:"after_samples"`           // whole samples done: those under way then finished too
	OfSamples    int     `json:"of_samples"`
	CallsSaved   int     `json:"calls_saved"`
	AnswersSaved int     `json:"answers_saved"`
	CostSavedUSD float64 `json:"cost_saved_usd"` // at the estimate's prices; 0 unpriced
}

// stopped puts a stopping rule's figures in the summary: how the run
// stopped, and the anytime-valid interval beside the usual one of the
// metric the rule watches.
func (s *Summary) stopped(f *stop.Figures) {
	if f == nil {
		return
	}
	s.Stopping = f
	if st := f.Stopped; st != nil && !st.Extended {
		s.Stopped = &Stopped{Reason: st.Reason, DecidedAfter: st.DecidedAt, AfterSamples: st.Samples, OfSamples: st.OfSamples, CallsSaved: st.SavedCalls,
			AnswersSaved: st.SavedTasks, CostSavedUSD: st.SavedUSD}
	}
	for _, iv := range f.Intervals {
		if iv.Versus != "" {
			continue
		}
		for ci := range s.Conditions {
			if s.Conditions[ci].Name != iv.Condition {
				continue
			}
			for mi := range s.Conditions[ci].Metrics {
				if m := &s.Conditions[ci].Metrics[mi]; m.Name == f.Metric {
					m.CS95 = &[2]float64{iv.Lo, iv.Hi}
				}
			}
		}
	}
}

// Grouped is the summary as `assay run --json` and the API give it: a run
// over several models lists its conditions with their models under each;
// any other run's is the summary itself.
func (s *Summary) Grouped() *Summary {
	if s == nil || s.byModel == nil {
		return s
	}
	g := *s
	g.Conditions, g.byModel = s.byModel, nil
	return &g
}

// CountRateLimited sets each condition's RateLimited from counts, by the
// run's condition names; a run over several models adds its models' under
// their condition.
func (s *Summary) CountRateLimited(counts map[string]int64) {
	s.setCounts(func(name string) int { return int(counts[name]) }, func(c *ConditionSummary, n int) {
		n64 := int64(n)
		c.RateLimited = &n64
	})
}

// setCounts sets, through set, each condition's count by its name; a run
// over several models gives its models theirs under their condition, and
// the condition their sum.
func (s *Summary) setCounts(count func(name string) int, set func(c *ConditionSummary, n int)) {
	name := map[[2]string]string{}
	for i := range s.Conditions {
		c := &s.Conditions[i]
		set(c, count(c.Name))
		name[[2]string{c.Base, c.Model}] = c.Name
	}
	for i := range s.byModel {
		g := &s.byModel[i]
		sum := 0
		for j := range g.Models {
			n := count(name[[2]string{g.Name, g.Models[j].Model}])
			set(&g.Models[j], n)
			sum += n
		}
		set(g, sum)
	}
}

// ConditionSummary is one condition's results and metrics.
type ConditionSummary struct {
	Name string `json:"name"`
	// Base and Model say, in a run over several models, which condition and
	// model the run's condition is; Models are, in the JSON, the models'
	// own figures under their condition.
	Base        string             `json:"-"`
	Model       string             `json:"-"`
	Models      []ConditionSummary `json:"models,omitempty"`
	Results     int                `json:"results"`
	Errors      int                `json:"errors"`
	JudgeErrors int                `json:"judge_errors"`
	Retried     int                `json:"retried"`
	// RateLimited counts the calls (agent's and judges') answered 429 while
	// this process executed the run: in assay run --json only.
	RateLimited *int64 `json:"rate_limited,omitempty"`
	// BatchedCalls counts the judge calls answered in a batch, for a run
	// whose judge calls went in batches.
	BatchedCalls *int `json:"batched_calls,omitempty"`
	// ErrorKinds counts the agent's errors by kind (timeout, rate_limited,
	// server_error, refused, connection, bad_response, too_large, guard,
	// turn_limit, mcp_server, command, sandbox, other); JudgeErrorKinds the
	// judges' and deterministic evaluators'.
	ErrorKinds      map[store.ErrorKind]int `json:"error_kinds,omitempty"`
	JudgeErrorKinds map[store.ErrorKind]int `json:"judge_error_kinds,omitempty"`
	// TopErrors are the most common error messages, the agent's then the
	// judges', each with its count.
	TopErrors  []store.ErrorCount `json:"top_errors,omitempty"`
	ToolCalls  int                `json:"tool_calls"`
	ToolErrors int                `json:"tool_errors"`
	CostUSD    float64            `json:"cost_usd"`
	TokensIn   int                `json:"tokens_in"`
	TokensOut  int                `json:"tokens_out"`
	LatencyMS  float64            `json:"mean_latency_ms"`
	Metrics    []MetricSummary    `json:"metrics"`
	// PassAtK is code_execution's pass@k for each k up to the repetitions
	// ("1", "2", "3", "5", "10"…), with the unbiased estimator of the HumanEval
	// paper averaged over problems; PassAtKCI95 its 95% interval over problems.
	PassAtK     map[string]float64    `json:"pass_at_k,omitempty"`
	PassAtKCI95 map[string][2]float64 `json:"pass_at_k_ci95,omitempty"`
	// PassHatK, FlipRate and FleissKappa are the consistency of the
	// condition's first pass/fail metric (code_execution's when it has it)
	// across repetitions, as that metric's own (MetricSummary).
	PassHatK    map[string]float64 `json:"pass_hat_k,omitempty"`
	FlipRate    *float64           `json:"flip_rate,omitempty"`
	FleissKappa *float64           `json:"fleiss_kappa,omitempty"`
}

// MetricSummary is one metric under one condition. Std is over per-sample
// means; Stderr and CI95 treat a sample's repetitions as one cluster, CI95
// clipped to the metric's scale; N counts the scores; RepetitionSpread is the
// mean per-sample std over repetitions; Disagreement the share of samples
// whose repetitions differ.
type MetricSummary struct {
	Evaluator string     `json:"evaluator"`
	Name      string     `json:"name"`
	Mean      float64    `json:"mean"`
	Std       float64    `json:"std"`
	Stderr    float64    `json:"stderr"`
	CI95      [2]float64 `json:"ci95"`
	// CS95 is the 95% anytime-valid interval (a confidence sequence's),
	// for the metric a stopping rule watches: valid however often the
	// run was looked at.
	CS95             *[2]float64 `json:"cs95,omitempty"`
	N                int         `json:"n"`
	Samples          int         `json:"samples"`
	RepetitionSpread float64     `json:"repetition_spread"`
	Disagreement     float64     `json:"disagreement"`
	// Variance splits the scores' variance into sample, agent and judge.
	Variance *Variance `json:"variance,omitempty"`
	// JudgeConsistency is the judge against itself, when it scored answers
	// more than once.
	JudgeConsistency *JudgeConsistency `json:"judge_consistency,omitempty"`
	// MDD is the smallest true paired difference from the run's first
	// condition that a paired t-test (α = 0.05, two-sided) detects with 80%
	// power, given the spread of the differences and the samples compared;
	// absent for the first condition. MDDSD is that spread.
	MDD   *float64 `json:"mdd,omitempty"`
	MDDSD float64  `json:"mdd_sd,omitempty"`
	// Judges are a panel's judges on this metric, each with its mean and its
	// offset from the panel; JudgeAlpha is how the judges agree
	// (Krippendorff's ordinal alpha). Absent without a panel.
	Judges     []JudgeFigure `json:"judges,omitempty"`
	JudgeAlpha *float64      `json:"judge_alpha,omitempty"`
	// On a pass/fail metric answered more than once per sample, its
	// consistency: pass@k (some of k tries pass) and τ-bench's pass^k (all
	// k pass) for k = 1…repetitions, each sample's unbiased estimate
	// averaged over samples; FlipRate, the share of samples whose
	// repetitions disagree; FleissKappa, the repetitions' agreement beyond
	// chance (absent when undefined).
	PassAtK     map[string]float64 `json:"pass_at_k,omitempty"`
	PassHatK    map[string]float64 `json:"pass_hat_k,omitempty"`
	FlipRate    *float64           `json:"flip_rate,omitempty"`
	FleissKappa *float64           `json:"fleiss_kappa,omitempty"`
	// PassAt is the score at or above which a rubric metric passes, for
	// these figures (the rubric's pass_at); absent for a pass/fail metric.
	PassAt *float64 `json:"pass_at,omitempty"`
	// PPI is the mean corrected by people's reviews; null under
	// MinPPIReviews answers reviewed in a review order.
	PPI *PPI `json:"ppi"`
}

// Summarize reads a run and computes its summary.
func Summarize(ctx context.Context, db *store.DB, runID int64) (*Summary, error) {
	r, err := Load(ctx, db, runID)
	if err != nil {
		return nil, err
	}
	return r.Summary, nil
}

// summarize computes the summary from the report's totals and groups.
func (r *Report) summarize(progress []store.ConditionProgress, top map[string][]store.ErrorCount) *Summary {
	run := r.Run
	s := &Summary{
		RunID:         run.ID,
		Name:          run.Name,
		Status:        run.Status,
		Message:       run.Message,
		DatasetSHA256: r.Dataset.SHA256,
		TotalTasks:    run.TotalTasks,
		RejudgedFrom:  run.RejudgedFrom,
	}
	byName := map[string]store.ConditionProgress{}
	for _, p := range progress {
		byName[p.Condition] = p
	}
	metrics := r.metricSummaries()
	for ci, name := range r.Conditions {
		p := byName[name]
		cs := conditionTotals(run.Conditions[ci], p, top[name])
		for i, m := range r.Metrics {
			if groups := r.Samples(i, name); len(groups) > 0 && m.Evaluator == string(config.EvalCodeExecution) {
				cs.PassAtK, cs.PassAtKCI95 = passAtK(Values(groups), r.Run.Repetitions)
			}
		}
		for _, ms := range metrics[ci] {
			if ms != nil {
				cs.Metrics = append(cs.Metrics, *ms)
			}
		}
		cs.takeConsistency()
		s.Results += p.Done
		s.Errors += p.Errors
		s.CostUSD += p.CostUSD
		s.Conditions = append(s.Conditions, cs)
	}
	s.byModel = r.groupByModel(s.Conditions)
	return s
}

// metricSummaries is each metric's figures under each condition (nil where
// it has no scores), computed in parallel (the variance's bootstrap above
// all), then kept in the report's order.
func (r *Report) metricSummaries() [][]*MetricSummary {
	metrics := make([][]*MetricSummary, len(r.Conditions))
	var wg sync.WaitGroup
	for ci, name := range r.Conditions {
		metrics[ci] = make([]*MetricSummary, len(r.Metrics))
		for i, m := range r.Metrics {
			if groups := r.Samples(i, name); len(groups) > 0 {
				wg.Go(func() { metrics[ci][i] = r.metricSummary(i, m, name, groups) })
			}
		}
	}
	wg.Wait()
	return metrics
}

// takeConsistency gives the condition its first pass/fail metric's
// consistency, code_execution's first.
func (cs *ConditionSummary) takeConsistency() {
	first := -1
	for j, ms := range cs.Metrics {
		if ms.PassHatK != nil && (first < 0 || ms.Evaluator == string(config.EvalCodeExecution) && cs.Metrics[first].Evaluator != ms.Evaluator) {
			first = j
		}
	}
	if first >= 0 {
		ms := cs.Metrics[first]
		cs.PassHatK, cs.FlipRate, cs.FleissKappa = ms.PassHatK, ms.FlipRate, ms.FleissKappa
	}
}

// conditionTotals is a condition's summary without its metrics.
func conditionTotals(c assay.Condition, p store.ConditionProgress, top []store.ErrorCount) ConditionSummary {
	return ConditionSummary{
		Name:            c.Name,
		Base:            c.Base,
		Model:           c.Model,
		Results:         p.Done,
		Errors:          p.Errors,
		JudgeErrors:     p.JudgeErrors,
		Retried:         p.Retries,
		ErrorKinds:      p.ErrorKinds,
		JudgeErrorKinds: p.JudgeErrorKinds,
		TopErrors:       top,
		ToolCalls:       p.ToolCalls,
		ToolErrors:      p.ToolErrors,
		CostUSD:         p.CostUSD,
		TokensIn:        p.TokensIn,
		TokensOut:       p.TokensOut,
		LatencyMS:       p.LatencyMS,
		Metrics:         []MetricSummary{},
	}
}

// Totals is a run's summary without metrics: its conditions' counts, cost
// and tokens, as the store keeps them while results commit. A live progress
// bar polls it; it reads one row per condition, however big the run.
func Totals(ctx context.Context, db *store.DB, run *store.Run) (*Summary, error) {
	progress, err := tally.Of(db).RunProgress(ctx, run.ID)
	if err != nil {
		return nil, err
	}
	byName := map[string]store.ConditionProgress{}
	for _, p := range progress {
		byName[p.Condition] = p
	}
	s := &Summary{RunID: run.ID, Name: run.Name, Status: run.Status, Message: run.Message, TotalTasks: run.TotalTasks}
	for _, c := range run.Conditions {
		p := byName[c.Name]
		s.Conditions = append(s.Conditions, conditionTotals(c, p, nil))
		s.Results += p.Done
		s.Errors += p.Errors
		s.CostUSD += p.CostUSD
	}
	return s, nil
}

// addKinds adds counts by error kind into into (made when nil).
func addKinds(into, from map[store.ErrorKind]int) map[store.ErrorKind]int {
	if len(from) == 0 {
		return into
	}
	if into == nil {
		into = map[store.ErrorKind]int{}
	}
	for k, n := range from {
		into[k] += n
	}
	return into
}

// mergeTopErrors merges two lists of the most common errors: the same
// message (of the agent, or of a judge) counted once with both counts, most
// frequent first, as many of each side as the longer list held.
func mergeTopErrors(a, b []store.ErrorCount) []store.ErrorCount {
	if len(b) == 0 {
		return a
	}
	keep := map[bool]int{}
	for _, list := range [][]store.ErrorCount{a, b} {
		n := map[bool]int{}
		for _, e := range list {
			n[e.Judge]++
		}
		for judge, k := range n {
			keep[judge] = max(keep[judge], k)
		}
	}
	var out []store.ErrorCount
	for _, e := range append(slices.Clone(a), b...) {
		i := slices.IndexFunc(out, func(o store.ErrorCount) bool { return o.Message == e.Message && o.Judge == e.Judge })
		if i < 0 {
			out = append(out, e)
			continue
		}
		out[i].Count += e.Count
	}
	slices.SortStableFunc(out, func(x, y store.ErrorCount) int {
		if x.Judge != y.Judge {
			if x.Judge {
				return 1
			}
			return -1
		}
		return y.Count - x.Count
	})
	kept := map[bool]int{}
	return slices.DeleteFunc(out, func(e store.ErrorCount) bool {
		kept[e.Judge]++
		return kept[e.Judge] > keep[e.Judge]
	})
}

// groupByModel gathers a run over several models' conditions under the run
// file's: each with its figures over every model (metrics over the union of
// the models' scores) and the models' own; nil for a run of one model.
func (r *Report) groupByModel(conditions []ConditionSummary) []ConditionSummary {
	var out []ConditionSummary
	index := map[string]int{}
	for _, c := range conditions {
		if c.Model == "" {
			return nil
		}
		i, ok := index[c.Base]
		if !ok {
			i = len(out)
			index[c.Base] = i
			out = append(out, ConditionSummary{Name: c.Base, Metrics: []MetricSummary{}})
		}
		out[i].addModel(c)
	}
	for gi := range out {
		g := &out[gi]
		for i, m := range r.Metrics {
			if groups := r.baseGroups(i, g.Name); len(groups) > 0 {
				g.Metrics = append(g.Metrics, summarizeMetric(m, groups))
			}
		}
	}
	return out
}

// addModel adds a model's condition to its base condition's totals, and
// keeps it among the base's models.
func (g *ConditionSummary) addModel(c ConditionSummary) {
	latency := g.LatencyMS*float64(g.Results) + c.LatencyMS*float64(c.Results)
	g.Results += c.Results
	if g.Results > 0 {
		g.LatencyMS = latency / float64(g.Results)
	}
	g.Errors += c.Errors
	g.JudgeErrors += c.JudgeErrors
	g.ErrorKinds = addKinds(g.ErrorKinds, c.ErrorKinds)
	g.JudgeErrorKinds = addKinds(g.JudgeErrorKinds, c.JudgeErrorKinds)
	g.TopErrors = mergeTopErrors(g.TopErrors, c.TopErrors)
	g.Retried += c.Retried
	g.ToolCalls += c.ToolCalls
	g.ToolErrors += c.ToolErrors
	g.CostUSD += c.CostUSD
	g.TokensIn += c.TokensIn
	g.TokensOut += c.TokensOut
	m := c
	m.Name, m.Models = c.Model, nil
	g.Models = append(g.Models, m)
}

// baseGroups is the i-th metric's scores by sample over every model's
// condition of a base condition, samples in the order first met.
func (r *Report) baseGroups(i int, base string) [][]float64 {
	merged := map[int64][]float64{}
	var order []int64
	for ci, name := range r.Conditions {
		if r.Run.Conditions[ci].Base != base {
			continue
		}
		for _, s := range r.Samples(i, name) {
			if _, seen := merged[s.SampleRow]; !seen {
				order = append(order, s.SampleRow)
			}
			merged[s.SampleRow] = append(merged[s.SampleRow], s.Values()...)
		}
	}
	groups := make([][]float64, len(order))
	for k, row := range order {
		groups[k] = merged[row]
	}
	return groups
}

// metricSummary is metric i under a condition: its figures, the parts of
// its variance, the judge against itself and the panel, and the difference
// from the first condition the run can detect.
func (r *Report) metricSummary(i int, m Metric, condition string, groups []SampleScores) *MetricSummary {
	ms := summarizeMetric(m, Values(groups))
	raw := r.Raw(i, condition)
	ms.Variance, ms.JudgeConsistency = varianceOf(raw), consistencyOf(raw)
	if r.judged(m) {
		ms.Judges, ms.JudgeAlpha = panelOf(raw, r.panelNames())
	}
	if r.Run.Repetitions >= 2 {
		if m.Scale == config.ScalePass {
			consistency(&ms, Values(groups), r.Run.Repetitions)
		} else if at, ok := r.Config.PassAt(m.Evaluator, m.Name); ok {
			consistency(&ms, passed(Values(groups), at), r.Run.Repetitions)
			ms.PassAt = &at
		}
	}
	if first := r.Conditions[0]; condition != first {
		if mdd, sd, _, ok := mddOf(pairTables(r.meanTable(i, first), r.meanTable(i, condition))); ok {
			ms.MDD, ms.MDDSD = &mdd, sd
		}
	}
	return &ms
}

func summarizeMetric(m Metric, groups [][]float64) MetricSummary {
	c := stats.Clustered(groups)
	lo, hi := m.Scale.Bounds()
	return MetricSummary{
		Evaluator:        m.Evaluator,
		Name:             m.Name,
		Mean:             c.Mean,
		Std:              c.Std,
		Stderr:           c.Stderr,
		CI95:             [2]float64{max(c.CILo, lo), min(c.CIHi, hi)},
		N:                c.N,
		Samples:          c.Samples,
		RepetitionSpread: stats.RepetitionSpread(groups),
		Disagreement:     stats.Disagreement(groups),
	}
}

// KindsText lists error counts by kind, most common first: "2 timeout · 1
// rate_limited"; "" for none.
func KindsText(kinds map[store.ErrorKind]int) string {
	names := slices.Collect(maps.Keys(kinds))
	slices.SortFunc(names, func(a, b store.ErrorKind) int { return cmp.Or(cmp.Compare(kinds[b], kinds[a]), cmp.Compare(a, b)) })
	parts := make([]string, len(names))
	for i, k := range names {
		parts[i] = fmt.Sprintf("%d %s", kinds[k], k)
	}
	return strings.Join(parts, " · ")
}

// consistency fills a pass/fail metric's pass@k, pass^k (k = 1…the
// repetitions), flip rate and Fleiss' κ from its samples' scores.
func consistency(ms *MetricSummary, attempts [][]float64, repetitions int) {
	ms.PassAtK, ms.PassHatK = map[string]float64{}, map[string]float64{}
	for k := 1; k <= min(repetitions, stats.MaxPassK); k++ {
		key := strconv.Itoa(k)
		if s := stats.PassAtKOver(attempts, k); s.Samples > 0 {
			ms.PassAtK[key] = s.Mean
		}
		if s := stats.PassHatKOver(attempts, k); s.Samples > 0 {
			ms.PassHatK[key] = s.Mean
		}
	}
	flip := stats.Disagreement(attempts)
	ms.FlipRate = &flip
	if kappa, ok := stats.FleissKappa(attempts); ok {
		ms.FleissKappa = &kappa
	}
}

// passed turns scores into passes (1) and fails (0): a score of at least
// at passes.
func passed(scores [][]float64, at float64) [][]float64 {
	out := make([][]float64, len(scores))
	for i, xs := range scores {
		out[i] = make([]float64, len(xs))
		for j, x := range xs {
			if x >= at {
				out[i][j] = 1
			}
		}
	}
	return out
}

// passAtK is pass@k for each k of stats.PassKs up to the attempts per problem.
func passAtK(attempts [][]float64, repetitions int) (map[string]float64, map[string][2]float64) {
	est, ci := map[string]float64{}, map[string][2]float64{}
	ks := slices.DeleteFunc(slices.Clone(stats.PassKs), func(k int) bool { return k > repetitions })
	if len(ks) > 0 && ks[len(ks)-1] != repetitions && repetitions <= 100 {
		ks = append(ks, repetitions)
	}
	for _, k := range ks {
		s := stats.PassAtKOver(attempts, k)
		if s.Samples == 0 {
			continue
		}
		key := strconv.Itoa(k)
		est[key], ci[key] = s.Mean, [2]float64{s.CILo, s.CIHi}
	}
	return est, ci
}

// PassKs are the k a condition has pass@k for, in increasing order.
func PassKs(c ConditionSummary) []string {
	return slices.SortedFunc(maps.Keys(c.PassAtK), func(a, b string) int {
		x, _ := strconv.Atoi(a)
		y, _ := strconv.Atoi(b)
		return x - y
	})
}

// panelNames names the judges of the run's panel by place; nil without one.
func (r *Report) panelNames() []string {
	if len(r.Config.Judges) < 2 {
		return nil
	}
	names := make([]string, len(r.Config.Judges))
	for i, j := range r.Config.Judges {
		names[i] = j.Name
	}
	return names
}

// judged reports whether a metric's scores come from a judge: the rubric,
// the arbiter or a rubric of the run's.
func (r *Report) judged(m Metric) bool {
	if config.Evaluator(m.Evaluator).UsesJudge() {
		return true
	}
	_, custom := r.Config.RubricNamed(m.Evaluator)
	return custom
}
