package route

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"

	"gonum.org/v1/gonum/stat"
)

// Options choose how a replay runs.
type Options struct {
	Orders     int    // random orders of the samples; 0 means 200
	Seed       uint64 // the same seed gives the same figures
	Weights    Weights
	Reward     string    // RewardDocs ("" too) or RewardConduit
	Settings   *Settings // nil: DefaultSettings
	Algorithms []string  // nil: every one, in Algorithms' order
}

// DefaultOrders is how many orders a replay takes unless told.
const DefaultOrders = 200

// maxOrders bounds a replay's orders.
const maxOrders = 10000

// Result is a replay's figures: per algorithm, means over the orders with
// 95% intervals over the orders (the 2.5th and 97.5th percentiles).
type Result struct {
	Samples    int               `json:"samples"`
	Orders     int               `json:"orders"`
	Seed       uint64            `json:"seed"`
	Weights    [3]float64        `json:"weights"` // quality, cost, latency
	Reward     string            `json:"reward"`  // docs or conduit: see Rewards
	Models     []ModelFigure     `json:"models"`
	Algorithms []AlgorithmResult `json:"algorithms"`
}

// ModelFigure is one model sent every query: what each algorithm is
// measured against.
type ModelFigure struct {
	Name      string  `json:"name"`
	Quality   float64 `json:"quality"`
	CostUSD   float64 `json:"cost_usd"` // per query
	LatencyMS float64 `json:"latency_ms"`
	Reward    float64 `json:"reward"`
}

// AlgorithmResult is one algorithm over every order. Quality is per query
// on 0–1, cost per query in USD, latency per query in ms; Regret is the
// mean per query of the best reward any model had minus the reward of the
// model picked. Share is the fraction of queries sent to each model.
type AlgorithmResult struct {
	Name         string             `json:"name"`
	Quality      float64            `json:"quality"`
	QualityCI95  [2]float64         `json:"quality_ci95"`
	CostUSD      float64            `json:"cost_usd"`
	CostCI95     [2]float64         `json:"cost_ci95"`
	TotalCostUSD float64            `json:"total_cost_usd"`
	LatencyMS    float64            `json:"latency_ms"`
	LatencyCI95  [2]float64         `json:"latency_ci95"`
	Reward       float64            `json:"reward"`
	RewardCI95   [2]float64         `json:"reward_ci95"`
	Regret       float64            `json:"regret"`
	RegretCI95   [2]float64         `json:"regret_ci95"`
	Share        map[string]float64 `json:"share"`
	// CostSaved is the share of Always-best's cost this algorithm saves,
	// when its quality is at least 95% of Always-best's (conduit's headline
	// form); absent otherwise.
	CostSaved *float64 `json:"cost_saved,omitempty"`
	// Curve is the cumulative average reward after each query, its mean
	// over the orders and that mean ± one standard deviation over orders.
	Curve, CurveLo, CurveHi []float64 `json:"-"`
	// ShareOverTime is, for each stretch of ShareBin queries in the order
	// they came, the share of them sent to each model (by the matrix's
	// order of models), over every order.
	ShareOverTime [][]float64 `json:"-"`
	ShareBin      int         `json:"-"`
}

// shareBins is how many stretches ShareOverTime cuts the queries into.
const shareBins = 40

// Replay runs each algorithm over opt.Orders random orders of the matrix's
// samples. It fails on a matrix of one model, bad weights, an order count
// out of range or an unknown algorithm, and stops with ctx's error when
// ctx is done.
func Replay(ctx context.Context, m *Matrix, opt Options) (*Result, error) {
	algos, err := checkReplay(m, &opt)
	if err != nil {
		return nil, err
	}
	n := len(m.Quality)
	settings := DefaultSettings(n)
	if opt.Settings != nil {
		settings = *opt.Settings
	}
	w := opt.Weights
	rw := rewards(m, w, opt.Reward)
	best := make([]float64, n)
	for i := range n {
		best[i] = slices.Max(rw[i])
	}
	res := &Result{Samples: n, Orders: opt.Orders, Seed: opt.Seed, Weights: [3]float64{w.Quality, w.Cost, w.Latency}, Reward: opt.Reward}
	res.Models = modelFigures(m, rw)
	cheapest := slices.IndexFunc(res.Models, func(f ModelFigure) bool {
		return f.CostUSD == slices.MinFunc(res.Models, func(a, b ModelFigure) int { return cmpFloat(a.CostUSD, b.CostUSD) }).CostUSD
	})
	bestModel := slices.IndexFunc(res.Models, func(f ModelFigure) bool {
		return f.Quality == slices.MaxFunc(res.Models, func(a, b ModelFigure) int { return cmpFloat(a.Quality, b.Quality) }).Quality
	})
	scale := rewardScale(w, opt.Reward)

	// The algorithms are replayed side by side, a core each: each draws
	// from sources of its own, so the figures are the same however many.
	res.Algorithms = make([]AlgorithmResult, len(algos))
	run := replayRun{ctx: ctx, m: m, opt: opt, settings: settings, rw: rw, best: best, scale: scale, cheapest: cheapest, bestModel: bestModel}
	var wg sync.WaitGroup
	slots := make(chan struct{}, runtime.GOMAXPROCS(0))
	for ai, name := range algos {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			res.Algorithms[ai] = run.algorithm(ai, name)
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	res.costSaved()
	return res, nil
}

// checkReplay checks a replay's matrix and options, filling in the
// defaults, and returns the algorithms to replay.
func checkReplay(m *Matrix, opt *Options) ([]string, error) {
	if err := m.Check(); err != nil {
		return nil, err
	}
	if err := opt.Weights.Check(); err != nil {
		return nil, err
	}
	if opt.Reward == "" {
		opt.Reward = RewardDocs
	}
	if !slices.Contains(Rewards, opt.Reward) {
		return nil, fmt.Errorf("reward %q: want docs (conduit's documented formula) or conduit (its library's)", opt.Reward)
	}
	if opt.Orders == 0 {
		opt.Orders = DefaultOrders
	}
	if opt.Orders < 0 || opt.Orders > maxOrders {
		return nil, fmt.Errorf("orders: want 1 to %d, got %d", maxOrders, opt.Orders)
	}
	algos := opt.Algorithms
	if algos == nil {
		algos = Algorithms
	}
	for _, a := range algos {
		if !slices.Contains(Algorithms, a) {
			return nil, fmt.Errorf("unknown routing algorithm %q (want one of %v)", a, Algorithms)
		}
	}
	return algos, nil
}

// modelFigures are each model's means over the samples, when it alone answers.
func modelFigures(m *Matrix, rw [][]float64) []ModelFigure {
	n := float64(len(m.Quality))
	var out []ModelFigure
	for a, name := range m.Models {
		f := ModelFigure{Name: name}
		for i := range m.Quality {
			f.Quality += m.Quality[i][a]
			f.CostUSD += m.Cost[i][a]
			f.LatencyMS += m.Latency[i][a]
			f.Reward += rw[i][a]
		}
		f.Quality, f.CostUSD, f.LatencyMS, f.Reward = f.Quality/n, f.CostUSD/n, f.LatencyMS/n, f.Reward/n
		out = append(out, f)
	}
	return out
}

// replayRun is what every algorithm's replay reads, and none changes.
type replayRun struct {
	ctx       context.Context // the replay stops when it is done
	m         *Matrix
	opt       Options
	settings  Settings
	rw        [][]float64 // each sample's reward from each model
	best      []float64   // each sample's best reward
	scale     func(float64) float64
	cheapest  int
	bestModel int
}

// algorithm replays the algorithm named, the ai-th, over every order.
func (rr replayRun) algorithm(ai int, name string) AlgorithmResult {
	n, k := len(rr.m.Quality), len(rr.m.Models)
	tl := newReplayTally(n, k)
	order := make([]int, n)
	for o := range rr.opt.Orders {
		if o%64 == 0 && rr.ctx.Err() != nil {
			return AlgorithmResult{}
		}
		orng := rand.New(rand.NewPCG(rr.opt.Seed, uint64(o)))
		for i := range order {
			order[i] = i
		}
		orng.Shuffle(n, func(i, j int) { order[i], order[j] = order[j], order[i] })
		src := rand.NewPCG(rr.opt.Seed^0x5bd1e995, uint64(o)<<8|uint64(ai))
		p, du := newPolicy(name, rr.m, k, rr.settings, rand.New(src), src, rr.scale, rr.cheapest, rr.bestModel)
		rr.replayOrder(tl, order, p, du)
	}
	return tl.result(name, rr.m.Models, rr.opt.Orders)
}

// replayTally adds up an algorithm's replays: the models it picked, over
// the whole replay and bin by bin, its running reward at each step, and
// each order's means.
type replayTally struct {
	n, bin                                 int
	shares                                 []float64
	overTime                               [][]float64
	sum, sumSq                             []float64
	quality, cost, latency, reward, regret []float64
}

func newReplayTally(n, k int) *replayTally {
	bin := max(1, (n+shareBins-1)/shareBins)
	tl := &replayTally{n: n, bin: bin, shares: make([]float64, k), overTime: make([][]float64, (n+bin-1)/bin),
		sum: make([]float64, n), sumSq: make([]float64, n)}
	for b := range tl.overTime {
		tl.overTime[b] = make([]float64, k)
	}
	return tl
}

// replayOrder replays one order of the samples with the policy (or the
// duel), adding what it picked and earned to the tally.
func (rr replayRun) replayOrder(tl *replayTally, order []int, p policy, du *dueling) {
	m, rw := rr.m, rr.rw
	var q, c, l, r, g float64
	for t, i := range order {
		x := m.Context[i]
		arm := p.pick(t, i, x)
		tl.shares[arm]++
		tl.overTime[t/tl.bin][arm]++
		q += m.Quality[i][arm]
		c += m.Cost[i][arm]
		l += m.Latency[i][arm]
		r += rw[i][arm]
		g += rr.best[i] - rw[i][arm]
		if du != nil {
			c += m.Cost[i][du.other] // both answers were asked for
			du.duel(x, rw[i][arm], rw[i][du.other])
		} else {
			p.learn(arm, x, rw[i][arm])
		}
		avg := r / float64(t+1)
		tl.sum[t] += avg
		tl.sumSq[t] += avg * avg
	}
	fn := float64(tl.n)
	tl.quality, tl.cost, tl.latency = append(tl.quality, q/fn), append(tl.cost, c/fn), append(tl.latency, l/fn)
	tl.reward, tl.regret = append(tl.reward, r/fn), append(tl.regret, g/fn)
}

// result is the algorithm's figures over the orders replayed: means with
// their intervals, shares, and the running reward's curve with its spread.
func (tl *replayTally) result(name string, models []string, orders int) AlgorithmResult {
	n, bin := tl.n, tl.bin
	ar := AlgorithmResult{Name: name, Share: map[string]float64{}, ShareOverTime: tl.overTime, ShareBin: bin}
	for b, counts := range tl.overTime {
		size := float64(min(bin, n-b*bin) * orders)
		for a := range counts {
			counts[a] /= size
		}
	}
	ar.Quality, ar.QualityCI95 = meanCI(tl.quality)
	ar.CostUSD, ar.CostCI95 = meanCI(tl.cost)
	ar.LatencyMS, ar.LatencyCI95 = meanCI(tl.latency)
	ar.Reward, ar.RewardCI95 = meanCI(tl.reward)
	ar.Regret, ar.RegretCI95 = meanCI(tl.regret)
	ar.TotalCostUSD = ar.CostUSD * float64(n)
	for a, s := range tl.shares {
		ar.Share[models[a]] = s / float64(orders*n)
	}
	R := float64(orders)
	ar.Curve, ar.CurveLo, ar.CurveHi = make([]float64, n), make([]float64, n), make([]float64, n)
	for t := range n {
		mean := tl.sum[t] / R
		sd := math.Sqrt(max(0, tl.sumSq[t]/R-mean*mean))
		ar.Curve[t], ar.CurveLo[t], ar.CurveHi[t] = mean, mean-sd, mean+sd
	}
	return ar
}

// costSaved fills each algorithm's saving against Always-best, where its
// quality is at least 95% of Always-best's.
func (r *Result) costSaved() {
	i := slices.IndexFunc(r.Algorithms, func(a AlgorithmResult) bool { return a.Name == AlwaysBest })
	if i < 0 || r.Algorithms[i].CostUSD <= 0 {
		return
	}
	ref := r.Algorithms[i]
	for j := range r.Algorithms {
		a := &r.Algorithms[j]
		if a.Quality >= 0.95*ref.Quality {
			saved := 1 - a.CostUSD/ref.CostUSD
			a.CostSaved = &saved
		}
	}
}

// newPolicy starts an algorithm afresh; for the dueling bandit it is also
// returned as such, since it learns from two answers.
func newPolicy(name string, m *Matrix, k int, s Settings, rng *rand.Rand, src rand.Source, scale func(float64) float64,
	cheapest, best int) (policy, *dueling) {
	d := len(m.Context[0])
	switch name {
	case Random:
		return &uniform{k: k, rng: rng}, nil
	case AlwaysCheapest:
		return fixed(cheapest), nil
	case AlwaysBest:
		return fixed(best), nil
	case Oracle:
		return oracle{m}, nil
	case Thompson:
		return newThompson(k, s.ThompsonPrior, rng, src, scale), nil
	case UCB1:
		return newUCB1(k, s.UCBC), nil
	case EpsilonGreedy:
		return &epsilonGreedy{means: newMeans(k), eps: s.Epsilon, decay: s.EpsilonDecay, floor: s.EpsilonFloor, rng: rng}, nil
	case LinUCB:
		return &linUCB{linear: newLinear(k, d, 1), alpha: s.LinUCBAlpha, score: make([]float64, k)}, nil
	case ContextualThompson:
		return &contextualThompson{linear: newLinear(k, d, s.Lambda), rng: rng, score: make([]float64, k)}, nil
	case Dueling:
		du := newDueling(k, d, s.DuelNoise, s.DuelRate, rng)
		return du, du
	case HybridThompsonLinUCB:
		t := newThompson(k, s.ThompsonPrior, rng, src, scale)
		lin := &linUCB{linear: newLinear(k, d, 1), alpha: s.LinUCBAlpha, score: make([]float64, k)}
		means := func() []float64 {
			out := make([]float64, k)
			for a := range out {
				// The Beta mean on 0–1, back onto the reward's scale.
				out[a] = unscale(t.alpha[a]/(t.alpha[a]+t.beta[a]), scale)
			}
			return out
		}
		return &hybrid{first: t, means: means, lin: lin, after: s.SwitchAfter}, nil
	case HybridUCB1LinUCB:
		u := newUCB1(k, s.HybridUCBC)
		lin := &linUCB{linear: newLinear(k, d, 1), alpha: s.LinUCBAlpha, score: make([]float64, k)}
		return &hybrid{first: u, means: func() []float64 { return slices.Clone(u.mean) }, lin: lin, after: s.SwitchAfter}, nil
	}
	panic("route: unknown algorithm " + name) // Replay checked the names
}

// unscale maps a value on 0–1 back onto the reward's scale.
func unscale(p float64, scale func(float64) float64) float64 {
	lo, hi := scale(0), scale(1) // scale is affine: scale(r) = lo + r·(hi − lo)
	return (p - lo) / (hi - lo)
}

// meanCI is the mean of values and their 2.5th and 97.5th percentiles.
func meanCI(values []float64) (float64, [2]float64) {
	mean := stat.Mean(values, nil)
	sorted := slices.Clone(values)
	slices.Sort(sorted)
	return mean, [2]float64{stat.Quantile(0.025, stat.Empirical, sorted, nil), stat.Quantile(0.975, stat.Empirical, sorted, nil)}
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Shares lists the models an algorithm sent queries to, largest share
// first (then by name), as "name 62%"; shares under half a percent are left out.
func (a AlgorithmResult) Shares() []string {
	names := make([]string, 0, len(a.Share))
	for n, s := range a.Share {
		if s >= 0.005 {
			names = append(names, n)
		}
	}
	slices.SortFunc(names, func(x, y string) int {
		if c := cmpFloat(a.Share[y], a.Share[x]); c != 0 {
			return c
		}
		return strings.Compare(x, y)
	})
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = fmt.Sprintf("%s %.0f%%", n, 100*a.Share[n])
	}
	return out
}
