package route

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// matrixOf builds a matrix of n samples from per-model functions of the
// sample's index.
func matrixOf(n int, models []string, quality, cost, latency func(i, a int) float64, context func(i int) []float64) *Matrix {
	m := &Matrix{Models: models}
	for i := range n {
		var q, c, l []float64
		for a := range models {
			q, c, l = append(q, quality(i, a)), append(c, cost(i, a)), append(l, latency(i, a))
		}
		m.Samples = append(m.Samples, fmt.Sprint(i))
		m.Quality, m.Cost, m.Latency = append(m.Quality, q), append(m.Cost, c), append(m.Latency, l)
		m.Context = append(m.Context, context(i))
	}
	return m
}

func byName(r *Result, name string) AlgorithmResult {
	for _, a := range r.Algorithms {
		if a.Name == name {
			return a
		}
	}
	panic(name)
}

func plain(i int) []float64 { return Features(fmt.Sprintf("question %d", i), nil) }

// UCB1 pulls each arm once, in order, before its bound decides.
func TestUCB1PullsEachArmFirst(t *testing.T) {
	u := newUCB1(4, math.Sqrt2)
	for want := range 4 {
		if got := u.pick(want, 0, nil); got != want {
			t.Fatalf("pick %d: arm %d", want, got)
		}
		u.learn(want, nil, 0.1*float64(want))
	}
	// Means 0, .1, .2, .3, one pull each: the bounds differ by the means alone.
	if got := u.pick(4, 0, nil); got != 3 {
		t.Errorf("after one pull each, UCB1 picks %d, want the best mean (3)", got)
	}
}

// Thompson sampling settles on a clearly best arm.
func TestThompsonConvergesOnTheBestArm(t *testing.T) {
	m := matrixOf(400, []string{"good", "fair", "poor"},
		func(i, a int) float64 { return []float64{0.9, 0.4, 0.2}[a] },
		func(i, a int) float64 { return 0.001 }, func(i, a int) float64 { return 100 }, plain)
	r, err := Replay(context.Background(), m, Options{Orders: 20, Seed: 1, Weights: DefaultWeights, Algorithms: []string{Thompson, UCB1, EpsilonGreedy}})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range r.Algorithms {
		want := 0.75 // UCB1's √2 bonus on rewards under 0.7 keeps exploring longer
		if a.Name == Thompson {
			want = 0.85
		}
		if a.Share["good"] < want {
			t.Errorf("%s sent %.2f of the queries to the best model", a.Name, a.Share["good"])
		}
	}
}

// On two clusters of questions, each won by another model, the contextual
// algorithms learn the split and beat the non-contextual ones, which can
// only pick one model for all.
func TestContextualAlgorithmsLearnClusters(t *testing.T) {
	features := func(i int) []float64 {
		if i%2 == 0 {
			return Features("the integral of the polynomial function", map[string]any{"subject": "calculus"})
		}
		return Features("who wrote the novel about the whale", map[string]any{"subject": "literature"})
	}
	m := matrixOf(600, []string{"math-model", "books-model"},
		func(i, a int) float64 {
			if (i%2 == 0) == (a == 0) {
				return 1
			}
			return 0
		},
		func(i, a int) float64 { return 0.001 }, func(i, a int) float64 { return 100 }, features)
	r, err := Replay(context.Background(), m, Options{Orders: 30, Seed: 2, Weights: DefaultWeights})
	if err != nil {
		t.Fatal(err)
	}
	best := 0.0
	for _, name := range []string{Thompson, UCB1, EpsilonGreedy, AlwaysBest} {
		best = max(best, byName(r, name).Quality)
	}
	if best > 0.6 {
		t.Errorf("a non-contextual algorithm reached quality %.3f on two opposite clusters", best)
	}
	for _, name := range []string{LinUCB, ContextualThompson, HybridThompsonLinUCB, HybridUCB1LinUCB} {
		if q := byName(r, name).Quality; q < best+0.2 {
			t.Errorf("%s: quality %.3f, not clearly above the non-contextual best %.3f", name, q, best)
		}
	}
	if q := byName(r, Oracle).Quality; q != 1 {
		t.Errorf("the oracle's quality %.3f, want 1", q)
	}
}

// The Oracle bounds every algorithm in every order; Random sits at the
// models' average; the fixed baselines pick by hindsight; the figures come
// back the same for the same seed.
func TestBaselinesAndBounds(t *testing.T) {
	m := matrixOf(300, []string{"cheap", "mid", "dear"},
		func(i, a int) float64 { return math.Mod(float64(i*(a+3))*0.37, 1) * (0.5 + 0.25*float64(a)) },
		func(i, a int) float64 { return []float64{0.0001, 0.001, 0.01}[a] * (1 + float64(i%3)) },
		func(i, a int) float64 { return []float64{300, 800, 2000}[a] }, plain)
	r, err := Replay(context.Background(), m, Options{Orders: 50, Seed: 3, Weights: DefaultWeights})
	if err != nil {
		t.Fatal(err)
	}
	oracle := byName(r, Oracle)
	for _, a := range r.Algorithms {
		if a.QualityCI95[1] > oracle.Quality+1e-12 {
			t.Errorf("%s: quality up to %.4f in some order, above the oracle's %.4f", a.Name, a.QualityCI95[1], oracle.Quality)
		}
		if a.Regret < -1e-12 {
			t.Errorf("%s: negative regret %.4f", a.Name, a.Regret)
		}
		total := 0.0
		for _, s := range a.Share {
			total += s
		}
		if math.Abs(total-1) > 1e-9 {
			t.Errorf("%s: shares add up to %.4f", a.Name, total)
		}
	}
	avg := (r.Models[0].Quality + r.Models[1].Quality + r.Models[2].Quality) / 3
	if rq := byName(r, Random); avg < rq.QualityCI95[0] || avg > rq.QualityCI95[1] {
		t.Errorf("random: quality CI %v does not hold the models' average %.4f", rq.QualityCI95, avg)
	}
	if s := byName(r, AlwaysCheapest).Share; s["cheap"] != 1 {
		t.Errorf("always_cheapest shares %v", s)
	}
	bestQ := ""
	for _, f := range r.Models {
		if bestQ == "" || f.Quality > r.Models[indexOf(r, bestQ)].Quality {
			bestQ = f.Name
		}
	}
	if s := byName(r, AlwaysBest).Share; s[bestQ] != 1 {
		t.Errorf("always_best shares %v, want all on %s", s, bestQ)
	}
	if ab := byName(r, AlwaysBest); ab.CostSaved == nil || *ab.CostSaved != 0 {
		t.Errorf("always_best saves nothing against itself: %v", ab.CostSaved)
	}
	again, _ := Replay(context.Background(), m, Options{Orders: 50, Seed: 3, Weights: DefaultWeights})
	other, _ := Replay(context.Background(), m, Options{Orders: 50, Seed: 4, Weights: DefaultWeights})
	for i := range r.Algorithms {
		if again.Algorithms[i].Reward != r.Algorithms[i].Reward {
			t.Errorf("%s: another reward for the same seed", r.Algorithms[i].Name)
		}
	}
	if other.Algorithms[0].Quality == r.Algorithms[0].Quality {
		t.Error("random's figures do not move with the seed")
	}
	// The algorithms replayed side by side give what one core gives, to the last bit.
	prev := runtime.GOMAXPROCS(1)
	alone, _ := Replay(context.Background(), m, Options{Orders: 50, Seed: 3, Weights: DefaultWeights})
	runtime.GOMAXPROCS(max(prev, 4))
	wide, _ := Replay(context.Background(), m, Options{Orders: 50, Seed: 3, Weights: DefaultWeights})
	runtime.GOMAXPROCS(prev)
	if !reflect.DeepEqual(alone, r) || !reflect.DeepEqual(wide, r) {
		t.Error("the replay's figures depend on the cores it had")
	}
}

func indexOf(r *Result, name string) int {
	for i, f := range r.Models {
		if f.Name == name {
			return i
		}
	}
	return -1
}

// Bad settings are refused with a message naming them.
func TestBadSettings(t *testing.T) {
	two := matrixOf(5, []string{"a", "b"}, func(i, a int) float64 { return 0.5 }, func(i, a int) float64 { return 0.1 },
		func(i, a int) float64 { return 1 }, plain)
	one := matrixOf(5, []string{"a"}, func(i, a int) float64 { return 0.5 }, func(i, a int) float64 { return 0.1 },
		func(i, a int) float64 { return 1 }, plain)
	for _, tc := range []struct {
		m    *Matrix
		opt  Options
		want string
	}{
		{one, Options{Weights: DefaultWeights}, "two models or more; this run has 1"},
		{two, Options{Weights: Weights{}}, "add up to more than 0"},
		{two, Options{Weights: Weights{Quality: 1, Cost: -1}}, "at least 0"},
		{two, Options{Weights: DefaultWeights, Orders: -3}, "orders: want 1 to"},
		{two, Options{Weights: DefaultWeights, Algorithms: []string{"softmax"}}, `unknown routing algorithm "softmax"`},
	} {
		if _, err := Replay(context.Background(), tc.m, tc.opt); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.opt, err, tc.want)
		}
	}
	// A replay whose context is done stops: a server closing does not
	// wait for it.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if res, err := Replay(ctx, two, Options{Weights: DefaultWeights, Orders: maxOrders}); !errors.Is(err, context.Canceled) || res != nil {
		t.Errorf("a cancelled replay: %v, %v", res, err)
	}
	if _, err := ParseWeights("0.7,0.2"); err == nil {
		t.Error("two weights were taken")
	}
	if w, err := ParseWeights("0.5, 0.5, 0"); err != nil || w.Cost != 0.5 {
		t.Errorf("ParseWeights: %+v %v", w, err)
	}
}

// The dueling bandit asks two models each time: its cost counts both.
func TestDuelingPaysForTwoAnswers(t *testing.T) {
	m := matrixOf(100, []string{"a", "b", "c"}, func(i, a int) float64 { return 0.5 }, func(i, a int) float64 { return 1 },
		func(i, a int) float64 { return 10 }, plain)
	r, err := Replay(context.Background(), m, Options{Orders: 3, Seed: 5, Weights: DefaultWeights, Algorithms: []string{Dueling}})
	if err != nil {
		t.Fatal(err)
	}
	if c := r.Algorithms[0].CostUSD; c != 2 {
		t.Errorf("dueling's cost per query %v, want 2 (two answers at 1 each)", c)
	}
}

// The two rewards by hand, on two samples of two models: quality 1 and 0.5,
// 0.5 and 1; costs $0.02 and $0.01; latencies 2,000 and 500 ms.
//
//	docs: 0.7·q − 0.2·cost' − 0.1·latency' (min–max over the two models):
//	  model a: 0.7·1 − 0.2 − 0.1 = 0.4, 0.7·0.5 − 0.2 − 0.1 = 0.05 → 0.225
//	  model b: 0.7·0.5 = 0.35, 0.7·1 = 0.7 → 0.525
//	conduit: 0.7·q + 0.2/(1 + cost) + 0.1/(1 + latency s):
//	  model a: (0.7 + 0.35)/2 + 0.2/1.02 + 0.1/3 = 0.754412
//	  model b: (0.35 + 0.7)/2 + 0.2/1.01 + 0.1/1.5 = 0.789686
func TestTheTwoRewards(t *testing.T) {
	m := matrixOf(2, []string{"a", "b"},
		func(i, a int) float64 { return [][]float64{{1, 0.5}, {0.5, 1}}[i][a] },
		func(i, a int) float64 { return []float64{0.02, 0.01}[a] },
		func(i, a int) float64 { return []float64{2000, 500}[a] }, plain)
	for _, tc := range []struct {
		reward string
		want   [2]float64
	}{{"", [2]float64{0.225, 0.525}}, {RewardDocs, [2]float64{0.225, 0.525}},
		{RewardConduit, [2]float64{0.525 + 0.2/1.02 + 0.1/3, 0.525 + 0.2/1.01 + 0.1/1.5}}} {
		r, err := Replay(context.Background(), m, Options{Orders: 2, Seed: 1, Weights: DefaultWeights, Reward: tc.reward})
		if err != nil {
			t.Fatal(err)
		}
		for a, want := range tc.want {
			if got := r.Models[a].Reward; math.Abs(got-want) > 1e-12 {
				t.Errorf("reward %q, model %s: %.6f, want %.6f", tc.reward, r.Models[a].Name, got, want)
			}
		}
		if want := cmp.Or(tc.reward, RewardDocs); r.Reward != want {
			t.Errorf("the result says reward %q, want %q", r.Reward, want)
		}
	}
	if _, err := Replay(context.Background(), m, Options{Orders: 2, Weights: DefaultWeights, Reward: "mine"}); err == nil || !strings.Contains(err.Error(), `reward "mine"`) {
		t.Errorf("an unknown reward: %v", err)
	}
}
