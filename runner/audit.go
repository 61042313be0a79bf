package runner

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"time"

	"assay"
	"assay/config"
	"assay/report"
	"assay/runner/audit"
	"assay/runner/judge"
	"assay/store"
)

// auditPlan is what an audit of a run will judge again.
type auditPlan struct {
	spec      *config.Config
	e         *evaluators
	padded    []store.Result    // answers to pad, each judged again by every judge (first repetition)
	shortened []store.Result    // those of them that shorten (audit.Shorten), judged again shortened
	pairs     [][2]store.Result // answers of two conditions to one sample, compared in both orders
	perCall   float64           // the run's mean cost of a judge call, for the estimate
	priced    bool
	est       audit.Estimate

	// While it is made: the samples each probe needs, the probes asked,
	// the conditions' places, and the run's judge calls so far.
	n                   int
	verbosity, position bool
	place               map[string]int
	judgedCalls         int
	judgedCost          float64
}

// AuditEstimate is what an audit of a run with opts would call and cost.
func (m *Manager) AuditEstimate(ctx context.Context, runID int64, opts audit.Options) (audit.Estimate, error) {
	p, err := m.planAudit(ctx, runID, opts)
	if err != nil {
		return audit.Estimate{}, err
	}
	return p.est, nil
}

// Audit judges again a sample of a finished run's answers to see how its
// judge is biased: padded with content-free text (verbosity), and two
// conditions' answers to a sample compared in both orders (position). Its
// calls and cost are its own: the run's results and scores are left as
// they are. An estimate over opts.Budget is refused before any call; a
// budget reached stops the audit's calls, the figures then over what was
// judged.
func (m *Manager) Audit(ctx context.Context, runID int64, opts audit.Options) (*audit.Result, error) {
	p, err := m.plannedAudit(ctx, runID, opts)
	if err != nil {
		return nil, err
	}
	return m.audit(ctx, runID, p, opts)
}

// plannedAudit plans an audit and refuses one whose estimate is over its
// budget.
func (m *Manager) plannedAudit(ctx context.Context, runID int64, opts audit.Options) (*auditPlan, error) {
	p, err := m.planAudit(ctx, runID, opts)
	if err != nil {
		return nil, err
	}
	if opts.Budget > 0 && p.est.CostUSD > opts.Budget {
		return nil, assay.Errorf(assay.EINVALID, "The audit would cost about $%.4f (%d judge calls), over its budget of $%.4f: ask for fewer samples or a larger budget.",
			p.est.CostUSD, p.est.Calls, opts.Budget)
	}
	return p, nil
}

// audit makes the calls of a planned audit.
func (m *Manager) audit(ctx context.Context, runID int64, p *auditPlan, opts audit.Options) (*audit.Result, error) {
	res := &audit.Result{RunID: runID, At: time.Now().UTC(), Estimate: p.est}
	spent := func() bool { return opts.Budget > 0 && res.CostUSD >= opts.Budget }
	probes := opts.Asked()
	if slices.Contains(probes, audit.ProbeVerbosity) {
		padded, err := m.judgeAgain(ctx, p, res, spent, p.padded, func(r *store.Result) string { return audit.Pad(r.Response) })
		if err != nil {
			return nil, err
		}
		res.Probes.Verbosity = audit.VerbosityOf(padded)
		shortened, err := m.judgeAgain(ctx, p, res, spent, p.shortened, func(r *store.Result) string {
			short, _ := audit.Shorten(r.Response)
			return short
		})
		if err != nil {
			return nil, err
		}
		res.Probes.Verbosity.Shortened = audit.ShorteningOf(shortened, len(p.shortened))
	}
	if slices.Contains(probes, audit.ProbePosition) {
		pos, err := m.positionProbe(ctx, p, res, spent)
		if err != nil {
			return nil, err
		}
		res.Probes.Position = pos
	}
	return res, nil
}

// judgeAgain judges answers again, each as text makes it, by every judge
// of the run (its first repetition), and gives each score's change.
func (m *Manager) judgeAgain(ctx context.Context, p *auditPlan, res *audit.Result, spent func() bool, answers []store.Result, text func(*store.Result) string) ([]audit.Change, error) {
	var changes []audit.Change
	for i := range answers {
		r := &answers[i]
		if spent() {
			break
		}
		s, err := m.db.Sample(ctx, r.SampleRow)
		if err != nil {
			return nil, err
		}
		for _, ev := range p.e.list {
			for _, call := range p.e.judges[ev] {
				if call.rep != 0 {
					continue
				}
				before, ok := judgementOf(r, ev.Label(), call.index)
				if !ok {
					continue
				}
				j := p.e.judge(ctx, ev, task{sample: s}, text(r), call)
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				res.Calls += max(j.Attempts, 1)
				res.CostUSD += j.CostUSD
				if j.Error != "" {
					res.Errors++
					continue
				}
				for _, sc := range j.Scores {
					if old, ok := scoreOf(before, sc.Metric); ok {
						changes = append(changes, audit.Change{Answer: r.ID, Sample: r.SampleRow, Evaluator: ev.Label(), Metric: sc.Metric, Delta: sc.Value - old})
					}
				}
			}
		}
	}
	return changes, nil
}

// positionProbe asks the run's (first) judge which of two conditions'
// answers to a sample is the better, in both orders.
func (m *Manager) positionProbe(ctx context.Context, p *auditPlan, res *audit.Result, spent func() bool) (*audit.Position, error) {
	panel := p.spec.Panel()
	if len(panel) == 0 {
		return &audit.Position{Why: "the run has no judge"}, nil
	}
	jc := panel[0]
	client, err := m.judgeClient(p.spec, jc, judgeKeyField(p.spec, 0), jc.Seed, nil)
	if err != nil {
		return nil, err
	}
	cmp := judge.Pairwise{Client: client}
	var pairs []audit.Pair
	for _, pair := range p.pairs {
		if spent() {
			break
		}
		s, err := m.db.Sample(ctx, pair[0].SampleRow)
		if err != nil {
			return nil, err
		}
		ref := judgeReference(p.e.kind, s)
		var won [2]bool
		failed := false
		for i, order := range [2][2]string{{pair[0].Response, pair[1].Response}, {pair[1].Response, pair[0].Response}} {
			first, v, err := cmp.Compare(ctx, s.Input, ref, order[0], order[1])
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if v != nil {
				res.Calls += max(v.Attempts, 1)
				cost, _ := p.e.prices.cost(judgeModel(jc), v.TokensIn, v.TokensOut, v.CacheReadTokens, v.CacheWriteTokens)
				res.CostUSD += cost
			}
			if err != nil {
				res.Errors++
				failed = true
				continue
			}
			won[i] = first
		}
		if !failed {
			pairs = append(pairs, audit.Pair{FirstWonAB: won[0], FirstWonBA: won[1]})
		}
	}
	return audit.PositionOf(pairs), nil
}

// planAudit picks what an audit judges again, and estimates it.
func (m *Manager) planAudit(ctx context.Context, runID int64, opts audit.Options) (*auditPlan, error) {
	run, spec, e, err := m.auditedRun(ctx, runID)
	if err != nil {
		return nil, err
	}
	p := &auditPlan{spec: spec, e: e, priced: true, n: opts.Samples, place: map[string]int{}}
	if p.n <= 0 {
		p.n = audit.DefaultSamples
	}
	if _, _, ok := config.PriceFor(spec.Prices, judgeModel(spec.Panel()[0])); !ok {
		p.priced = false
	}
	probes := opts.Asked()
	p.verbosity = slices.Contains(probes, audit.ProbeVerbosity)
	p.position = slices.Contains(probes, audit.ProbePosition) && len(run.Conditions) >= 2
	for i, c := range run.Conditions {
		p.place[c.Name] = i
	}
	// The samples in a seeded random order, their results read one sample
	// at a time until the audit has what it needs: a judged answer per
	// sample to pad, and a pair of two neighbouring conditions' answers
	// (the sample's place choosing which, so that each condition meets the
	// next and the last the first).
	refs, err := m.db.SampleRefs(ctx, run.DatasetID)
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(opts.Seed, 0xa0d17))
	rng.Shuffle(len(refs), func(i, j int) { refs[i], refs[j] = refs[j], refs[i] })
	for i, ref := range refs {
		if p.enough() {
			break
		}
		results, err := m.db.SampleResults(ctx, runID, ref.ID)
		if err != nil {
			return nil, err
		}
		p.take(i, results, rng)
	}
	p.estimate(judgesPerAnswer(e))
	return p, nil
}

// auditedRun is the run to audit, its config resolved and its evaluators:
// a finished run with a judge.
func (m *Manager) auditedRun(ctx context.Context, runID int64) (*store.Run, *config.Config, *evaluators, error) {
	run, err := m.db.Run(ctx, runID)
	if err != nil {
		return nil, nil, nil, err
	}
	if !run.Status.Finished() {
		return nil, nil, nil, assay.Errorf(assay.ECONFLICT, "Run %d is %s: a judge audit is of a finished run.", runID, run.Status)
	}
	spec, err := run.Config.Resolve(m.opts.Getenv)
	if err != nil {
		return nil, nil, nil, err
	}
	if !slices.ContainsFunc(spec.Evaluators, config.Evaluator.UsesJudge) {
		return nil, nil, nil, assay.Errorf(assay.EINVALID, "Run %d has no judge to audit: its evaluators are deterministic.", runID)
	}
	ds, err := m.db.Dataset(ctx, run.DatasetID)
	if err != nil {
		return nil, nil, nil, err
	}
	e, err := m.newEvaluators(spec, ds.Kind, nil)
	return run, spec, e, err
}

// judgesPerAnswer is how many judge calls judge an answer once.
func judgesPerAnswer(e *evaluators) int {
	n := 0
	for _, ev := range e.list {
		for _, call := range e.judges[ev] {
			if call.rep == 0 {
				n++
			}
		}
	}
	return n
}

// enough reports whether the plan has what its probes need.
func (p *auditPlan) enough() bool {
	return (!p.verbosity || len(p.padded) >= p.n) && (!p.position || len(p.pairs) >= p.n)
}

// take takes from one sample's results (the i-th in the audit's order) a
// judged answer to pad and a pair of conditions' answers to compare, as
// far as the plan needs them, and counts its judge calls' cost.
func (p *auditPlan) take(i int, results []store.Result, rng *rand.Rand) {
	judged, answers := p.sortAnswers(results)
	if p.verbosity && len(p.padded) < p.n && len(judged) > 0 {
		r := judged[rng.IntN(len(judged))]
		p.padded = append(p.padded, *r)
		if _, ok := audit.Shorten(r.Response); ok {
			p.shortened = append(p.shortened, *r)
		}
	}
	if p.position && len(p.pairs) < p.n {
		p.takePair(i, answers)
	}
}

// sortAnswers sorts a sample's results: its answers judged by a seeded
// call that succeeded, and its conditions' first answers in the plan's
// places; it counts the judged calls and their cost.
func (p *auditPlan) sortAnswers(results []store.Result) (judged, answers []*store.Result) {
	answers = make([]*store.Result, len(p.place))
	seeded := func(j store.Judgement) bool { return j.Seed != nil && j.Error == "" }
	for ri := range results {
		r := &results[ri]
		for _, j := range r.Judgements {
			if seeded(j) {
				p.judgedCalls++
				p.judgedCost += j.CostUSD
			}
		}
		if r.Error != "" || r.Response == "" {
			continue
		}
		if slices.ContainsFunc(r.Judgements, seeded) {
			judged = append(judged, r)
		}
		if at, ok := p.place[r.Condition]; ok && r.Repetition == 1 {
			answers[at] = r
		}
	}
	return judged, answers
}

// takePair takes the sample's pair of neighbouring conditions, or the next
// it has both answers of.
func (p *auditPlan) takePair(i int, answers []*store.Result) {
	k := len(answers)
	for step := range k {
		a := (i + step) % k
		if b := (a + 1) % k; answers[a] != nil && answers[b] != nil && (k > 2 || a == 0) {
			p.pairs = append(p.pairs, [2]store.Result{*answers[a], *answers[b]})
			return
		}
	}
}

// estimate is the plan's calls and cost, at the run's mean cost of a judge call.
func (p *auditPlan) estimate(perAnswer int) {
	if p.judgedCalls > 0 {
		p.perCall = p.judgedCost / float64(p.judgedCalls)
	}
	p.est.Calls = (len(p.padded)+len(p.shortened))*perAnswer + 2*len(p.pairs)
	p.est.CostUSD, p.est.Priced = float64(p.est.Calls)*p.perCall, p.priced
}

// judgementOf is a result's first-repetition judgement by an evaluator's
// judge at a panel place.
func judgementOf(r *store.Result, evaluator string, index int) (*store.Judgement, bool) {
	for i := range r.Judgements {
		j := &r.Judgements[i]
		if j.Evaluator == evaluator && j.JudgeIndex == index && j.JudgeRepetition == 0 && j.Error == "" {
			return j, true
		}
	}
	return nil, false
}

// scoreOf is a judgement's value of a metric.
func scoreOf(j *store.Judgement, metric string) (float64, bool) {
	for _, s := range j.Scores {
		if s.Metric == metric {
			return s.Value, true
		}
	}
	return 0, false
}

// AuditAndKeep audits a run's judge (Audit), adds what its report knows
// (the judges of a model's own family, how a panel's judges err against
// people) and keeps the result with the run.
func (m *Manager) AuditAndKeep(ctx context.Context, runID int64, opts audit.Options) (*audit.Result, error) {
	res, err := m.Audit(ctx, runID, opts)
	if err == nil {
		err = m.keepAudit(ctx, res, opts)
	}
	if err != nil {
		return nil, err
	}
	return res, nil
}

// keepAudit adds to an audit what the run's report knows and keeps it
// with the run.
func (m *Manager) keepAudit(ctx context.Context, res *audit.Result, opts audit.Options) error {
	rep, err := report.Load(ctx, m.db, res.RunID)
	if err != nil {
		return err
	}
	res.Complete(rep, opts.Asked())
	b, err := json.Marshal(res)
	if err != nil {
		return err
	}
	return m.db.SaveAudit(context.WithoutCancel(ctx), res.RunID, res.Calls, res.CostUSD, b)
}

// StartAudit audits a run's judge in the background (AuditAndKeep), under
// the manager's life: Close stops it. It checks what it can first — a
// finished run with a judge, an estimate within the budget — and does
// nothing when an audit of the run is under way already.
func (m *Manager) StartAudit(runID int64, opts audit.Options) (audit.Estimate, error) {
	p, err := m.plannedAudit(m.base, runID, opts)
	if err != nil {
		return audit.Estimate{}, err
	}
	est := p.est
	m.mu.Lock()
	if m.base.Err() != nil {
		m.mu.Unlock()
		return est, ErrClosed
	}
	if m.auditing[runID] {
		m.mu.Unlock()
		return est, nil
	}
	if m.auditing == nil {
		m.auditing = map[int64]bool{}
	}
	m.auditing[runID] = true
	m.wg.Add(1)
	m.mu.Unlock()
	go func() {
		defer m.wg.Done()
		res, err := m.audit(m.base, runID, p, opts)
		if err == nil {
			err = m.keepAudit(m.base, res, opts)
		}
		if err != nil && m.base.Err() == nil {
			m.log.Error("judge audit failed", "run_id", runID, "err", err)
		}
		m.mu.Lock()
		delete(m.auditing, runID)
		m.mu.Unlock()
	}()
	return est, nil
}

// Auditing reports whether an audit of the run's judge is under way here.
func (m *Manager) Auditing(runID int64) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.auditing[runID]
}
