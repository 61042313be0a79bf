package route

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/stat/distuv"
)

// This file holds the routing algorithms. Each picks a model for a query
// from what it has learnt, then learns from the reward of its pick.

// policy is one routing algorithm replaying one order of the queries.
type policy interface {
	// pick chooses the model for query i (its context x) at step t, from 0.
	pick(t, i int, x []float64) int
	// learn takes the reward of the model picked.
	learn(arm int, x []float64, r float64)
}

// The algorithms' names, as `assay route --json` gives them.
const (
	Random               = "random"
	AlwaysCheapest       = "always_cheapest"
	AlwaysBest           = "always_best"
	Oracle               = "oracle"
	Thompson             = "thompson"
	UCB1                 = "ucb1"
	EpsilonGreedy        = "epsilon_greedy"
	LinUCB               = "linucb"
	ContextualThompson   = "contextual_thompson"
	Dueling              = "dueling"
	HybridThompsonLinUCB = "hybrid_thompson_linucb"
	HybridUCB1LinUCB     = "hybrid_ucb1_linucb"
)

// Algorithms lists every algorithm in the order reports show them:
// baselines, then non-contextual, contextual and hybrid ones.
var Algorithms = []string{Random, AlwaysCheapest, AlwaysBest, Oracle, Thompson, UCB1, EpsilonGreedy,
	LinUCB, ContextualThompson, Dueling, HybridThompsonLinUCB, HybridUCB1LinUCB}

// Settings are the algorithms' parameters; DefaultSettings has conduit's.
type Settings struct {
	UCBC          float64 // UCB1's exploration, √2
	Epsilon       float64 // ε-greedy's first exploration rate, 0.1
	EpsilonDecay  float64 // multiplied into ε after each step, 1 (none)
	EpsilonFloor  float64 // ε's floor, 0.01
	LinUCBAlpha   float64 // LinUCB's exploration, 1
	Lambda        float64 // contextual Thompson's prior precision, 1
	DuelNoise     float64 // the dueling bandit's score noise, 0.1
	DuelRate      float64 // its learning rate, 0.01
	SwitchAfter   int     // the hybrids' queries before LinUCB takes over
	HybridUCBC    float64 // the UCB1 phase's exploration, 1.5
	ThompsonPrior float64 // Beta(prior, prior), 1
}

// DefaultSettings are conduit's defaults, but for the hybrids' switch:
// conduit switches after 2,000 queries, more than most datasets hold, so
// the replay switches after a quarter of the queries (at least 20).
func DefaultSettings(queries int) Settings {
	return Settings{UCBC: math.Sqrt2, Epsilon: 0.1, EpsilonDecay: 1, EpsilonFloor: 0.01, LinUCBAlpha: 1, Lambda: 1,
		DuelNoise: 0.1, DuelRate: 0.01, SwitchAfter: max(20, queries/4), HybridUCBC: 1.5, ThompsonPrior: 1}
}

// fixed always picks the same model: Always-cheapest and Always-best.
type fixed int

func (f fixed) pick(int, int, []float64) int { return int(f) }
func (fixed) learn(int, []float64, float64)  {}

// uniform picks a model at random.
type uniform struct {
	k   int
	rng *rand.Rand
}

func (u *uniform) pick(int, int, []float64) int { return u.rng.IntN(u.k) }
func (*uniform) learn(int, []float64, float64)  {}

// oracle picks, knowing every answer, the best quality for each query, the
// cheapest among ties.
type oracle struct{ m *Matrix }

func (o oracle) pick(_, i int, _ []float64) int {
	best := 0
	for a := 1; a < len(o.m.Models); a++ {
		q, bq := o.m.Quality[i][a], o.m.Quality[i][best]
		if q > bq+1e-12 || (math.Abs(q-bq) <= 1e-12 && o.m.Cost[i][a] < o.m.Cost[i][best]) {
			best = a
		}
	}
	return best
}
func (oracle) learn(int, []float64, float64) {}

// means keeps each arm's pulls and mean reward.
type means struct {
	n    []float64
	mean []float64
}

func newMeans(k int) means { return means{n: make([]float64, k), mean: make([]float64, k)} }

func (m *means) learn(arm int, r float64) {
	m.n[arm]++
	m.mean[arm] += (r - m.mean[arm]) / m.n[arm]
}

// argmax is the first arm of highest value.
func argmax(values []float64) int {
	best := 0
	for a, v := range values {
		if v > values[best] {
			best = a
		}
	}
	return best
}

// thompson is Beta-Bernoulli Thompson sampling: each arm's Beta(α, β) from
// Beta(1, 1); a reward r on 0–1 counts as one Bernoulli(r) draw.
type thompson struct {
	alpha, beta []float64
	draws       []float64
	rng         *rand.Rand
	src         rand.Source
	scale       func(float64) float64 // the reward onto 0–1
}

func newThompson(k int, prior float64, rng *rand.Rand, src rand.Source, scale func(float64) float64) *thompson {
	t := &thompson{alpha: make([]float64, k), beta: make([]float64, k), draws: make([]float64, k), rng: rng, src: src, scale: scale}
	for a := range k {
		t.alpha[a], t.beta[a] = prior, prior
	}
	return t
}

func (t *thompson) pick(int, int, []float64) int {
	for a := range t.alpha {
		t.draws[a] = distuv.Beta{Alpha: t.alpha[a], Beta: t.beta[a], Src: t.src}.Rand()
	}
	return argmax(t.draws)
}

func (t *thompson) learn(arm int, _ []float64, r float64) {
	if t.rng.Float64() < t.scale(r) {
		t.alpha[arm]++
	} else {
		t.beta[arm]++
	}
}

// ucb1 pulls each arm once, then the arm of highest mean + c·√(ln t / n).
type ucb1 struct {
	means
	c     float64
	score []float64
}

func newUCB1(k int, c float64) *ucb1 {
	return &ucb1{means: newMeans(k), c: c, score: make([]float64, k)}
}

func (u *ucb1) pick(int, int, []float64) int {
	total := 0.0
	for a, n := range u.n {
		if n == 0 {
			return a
		}
		total += n
	}
	for a := range u.score {
		u.score[a] = u.mean[a] + u.c*math.Sqrt(math.Log(total)/u.n[a])
	}
	return argmax(u.score)
}

func (u *ucb1) learn(arm int, _ []float64, r float64) { u.means.learn(arm, r) }

// epsilonGreedy explores a random arm with probability ε, else exploits the
// best mean; ε decays by a factor per step down to a floor.
type epsilonGreedy struct {
	means
	eps, decay, floor float64
	rng               *rand.Rand
}

func (e *epsilonGreedy) pick(int, int, []float64) int {
	explore := e.rng.Float64() < e.eps
	e.eps = max(e.floor, e.eps*e.decay)
	if explore {
		return e.rng.IntN(len(e.n))
	}
	return argmax(e.mean)
}

func (e *epsilonGreedy) learn(arm int, _ []float64, r float64) { e.means.learn(arm, r) }

// linear is each arm's ridge regression of the reward on the context:
// A = λI + Σ x xᵀ kept as its inverse (Sherman–Morrison), b = Σ r x.
type linear struct {
	d     int
	inv   [][]float64 // [arm] d×d, row-major
	b     [][]float64 // [arm] d
	theta [][]float64 // [arm] A⁻¹ b, kept up to date by learn
	tmp   []float64
	nz    []int     // the nonzero places of the context being scored
	prio  []float64 // [arm] a mean carried over from a warm-start, added to the prediction
}

func newLinear(k, d int, lambda float64) *linear {
	l := &linear{d: d, inv: make([][]float64, k), b: make([][]float64, k), theta: make([][]float64, k),
		tmp: make([]float64, d), nz: make([]int, 0, d), prio: make([]float64, k)}
	for a := range k {
		l.inv[a] = make([]float64, d*d)
		for i := range d {
			l.inv[a][i*d+i] = 1 / lambda
		}
		l.b[a] = make([]float64, d)
		l.theta[a] = make([]float64, d)
	}
	return l
}

// predict is the arm's estimate θᵀx and the width √(xᵀ A⁻¹ x), over the
// context's nonzero places (a hashed bag of words is mostly zeros) and
// half of the symmetric A⁻¹.
func (l *linear) predict(arm int, x []float64) (mean, width float64) {
	inv, d, theta := l.inv[arm], l.d, l.theta[arm]
	l.nz = l.nz[:0]
	for i, v := range x {
		if v != 0 {
			l.nz = append(l.nz, i)
			mean += theta[i] * v
		}
	}
	for p, i := range l.nz {
		row := inv[i*d:]
		xi := x[i]
		width += row[i] * xi * xi
		for _, j := range l.nz[p+1:] {
			width += 2 * row[j] * xi * x[j]
		}
	}
	return mean + l.prio[arm], math.Sqrt(max(width, 0))
}

// learn adds a context and its reward. The context's zeros are skipped
// (a zero term adds nothing, to the last bit), and A⁻¹ stays symmetric to
// the last bit (tmpᵢ·tmpⱼ = tmpⱼ·tmpᵢ), so half of it is computed: the
// figures are those of the whole products, in two thirds of the time.
func (l *linear) learn(arm int, x []float64, r float64) {
	inv, d := l.inv[arm], l.d
	l.nz = l.nz[:0]
	for j, v := range x {
		if v != 0 {
			l.nz = append(l.nz, j)
		}
	}
	for i := range d {
		s := 0.0
		row := inv[i*d : i*d+d]
		for _, j := range l.nz {
			s += row[j] * x[j]
		}
		l.tmp[i] = s
	}
	denom := 1.0
	for _, i := range l.nz {
		denom += x[i] * l.tmp[i]
	}
	for i := range d {
		ti := l.tmp[i]
		for j := i; j < d; j++ {
			v := inv[i*d+j] - ti*l.tmp[j]/denom
			inv[i*d+j], inv[j*d+i] = v, v
		}
	}
	for _, i := range l.nz {
		l.b[arm][i] += (r - l.prio[arm]) * x[i]
	}
	theta, b := l.theta[arm], l.b[arm]
	for i := range d {
		s := 0.0
		row := inv[i*d : i*d+d]
		for j, v := range row {
			s += v * b[j]
		}
		theta[i] = s
	}
}

// linUCB picks the arm of highest θᵀx + α·√(xᵀ A⁻¹ x).
type linUCB struct {
	*linear
	alpha float64
	score []float64
}

func (l *linUCB) pick(_, _ int, x []float64) int {
	for a := range l.score {
		m, w := l.predict(a, x)
		l.score[a] = m + l.alpha*w
	}
	return argmax(l.score)
}

// contextualThompson draws θ ~ N(μ, Σ) per arm and picks the highest θᵀx;
// θᵀx is then N(μᵀx, xᵀΣx), drawn directly.
type contextualThompson struct {
	*linear
	rng   *rand.Rand
	score []float64
}

func (c *contextualThompson) pick(_, _ int, x []float64) int {
	for a := range c.score {
		m, w := c.predict(a, x)
		c.score[a] = m + w*c.rng.NormFloat64()
	}
	return argmax(c.score)
}

// dueling keeps a preference weight vector per arm, picks the two arms of
// highest noisy score wᵀx + σz, routes the query to the first, and learns
// from which of the two did better.
type dueling struct {
	w            [][]float64
	noise, rate  float64
	rng          *rand.Rand
	score        []float64
	first, other int
}

func newDueling(k, d int, noise, rate float64, rng *rand.Rand) *dueling {
	du := &dueling{w: make([][]float64, k), noise: noise, rate: rate, rng: rng, score: make([]float64, k)}
	for a := range k {
		du.w[a] = make([]float64, d)
	}
	return du
}

func (du *dueling) pick(_, _ int, x []float64) int {
	for a, w := range du.w {
		s := 0.0
		for i, v := range w {
			s += v * x[i]
		}
		du.score[a] = s + du.noise*du.rng.NormFloat64()
	}
	du.first, du.other = 0, -1
	for a := range du.score {
		switch {
		case du.score[a] > du.score[du.first]:
			du.first, du.other = a, du.first
		case a != du.first && (du.other < 0 || du.score[a] > du.score[du.other]):
			du.other = a
		}
	}
	return du.first
}

// duel learns from the rewards of both arms of the last pick: the winner's
// weights move toward x, the loser's away.
func (du *dueling) duel(x []float64, rFirst, rOther float64) {
	p := 0.0
	switch {
	case rFirst > rOther:
		p = 1
	case rFirst < rOther:
		p = -1
	}
	conf := math.Min(1, math.Abs(rFirst-rOther)*4)
	for i, v := range x {
		du.w[du.first][i] += du.rate * p * conf * v
		du.w[du.other][i] -= du.rate * p * conf * v
	}
}

func (*dueling) learn(int, []float64, float64) {}

// hybrid starts with a non-contextual algorithm and hands over to LinUCB
// after a number of queries, LinUCB starting from the first phase's means.
type hybrid struct {
	first policy
	means func() []float64 // the first phase's mean reward per arm
	lin   *linUCB
	after int // queries before LinUCB takes over
	t     int
}

func (h *hybrid) pick(t, i int, x []float64) int {
	h.t = t
	if t == h.after {
		copy(h.lin.prio, h.means()) // warm start
	}
	if t < h.after {
		return h.first.pick(t, i, x)
	}
	return h.lin.pick(t, i, x)
}

func (h *hybrid) learn(arm int, x []float64, r float64) {
	if h.t < h.after {
		h.first.learn(arm, x, r)
		return
	}
	h.lin.learn(arm, x, r)
}
