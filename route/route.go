// Package route replays model-routing algorithms over a run's answers from
// every model: each sample was answered by each model and scored, so a
// routing algorithm can be run over the samples in any order, picking one
// model per query and learning from the reward of what it picked, without a
// single new call. Each algorithm is replayed over many random orders, so
// its figures come with intervals; the Oracle and every baseline are free.
//
// The algorithms follow conduit-benchmark's definitions and defaults
// (DOCS/BANDIT_ALGORITHMS.md there): Thompson sampling, UCB1, ε-greedy,
// LinUCB, contextual Thompson sampling, a dueling bandit and two hybrids,
// beside the baselines Random, Always-cheapest, Always-best and Oracle.
package route

import (
	"fmt"
	"math"
	"strings"
)

// Matrix is every model's answer to every sample, as the replay needs it:
// its quality on 0–1, its cost in USD and its latency in milliseconds, and
// the sample's context features for the contextual algorithms.
type Matrix struct {
	Models  []string
	Samples []string    // the samples' ids, in the matrix's order
	Quality [][]float64 // [sample][model]
	Cost    [][]float64 // [sample][model]
	Latency [][]float64 // [sample][model]
	Context [][]float64 // [sample], all of one length
}

// Check says what is wrong with a matrix, if anything.
func (m *Matrix) Check() error {
	switch {
	case len(m.Models) < 2:
		return fmt.Errorf("routing needs answers from two models or more; this run has %d", len(m.Models))
	case len(m.Quality) == 0:
		return fmt.Errorf("no sample was answered by every model")
	}
	n, k := len(m.Quality), len(m.Models)
	if len(m.Cost) != n || len(m.Latency) != n || len(m.Context) != n {
		return fmt.Errorf("the matrix's rows disagree: %d qualities, %d costs, %d latencies, %d contexts", n, len(m.Cost), len(m.Latency), len(m.Context))
	}
	for i := range n {
		if len(m.Quality[i]) != k || len(m.Cost[i]) != k || len(m.Latency[i]) != k {
			return fmt.Errorf("sample %d has answers from %d models, want %d", i, len(m.Quality[i]), k)
		}
	}
	return nil
}

// Weights weigh quality against cost and latency in the reward.
type Weights struct{ Quality, Cost, Latency float64 }

// DefaultWeights are conduit's: 0.7 quality, 0.2 cost, 0.1 latency.
var DefaultWeights = Weights{Quality: 0.7, Cost: 0.2, Latency: 0.1}

// ParseWeights reads "0.7,0.2,0.1".
func ParseWeights(s string) (Weights, error) {
	parts := strings.Split(s, ",")
	if len(parts) != 3 {
		return Weights{}, fmt.Errorf("weights %q: want three numbers, quality,cost,latency, such as 0.7,0.2,0.1", s)
	}
	var v [3]float64
	for i, p := range parts {
		if _, err := fmt.Sscanf(strings.TrimSpace(p), "%g", &v[i]); err != nil {
			return Weights{}, fmt.Errorf("weights %q: %q is not a number", s, p)
		}
	}
	w := Weights{v[0], v[1], v[2]}
	return w, w.Check()
}

// Check refuses weights that cannot make a reward: negative ones, or none
// above zero.
func (w Weights) Check() error {
	for _, v := range []float64{w.Quality, w.Cost, w.Latency} {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("weights: each must be a number of at least 0 (got %g, %g, %g)", w.Quality, w.Cost, w.Latency)
		}
	}
	if w.Quality+w.Cost+w.Latency <= 0 {
		return fmt.Errorf("weights: they must add up to more than 0")
	}
	return nil
}

// The rewards a replay can score a pick by. conduit-benchmark documents
// one (DOCS/BANDIT_ALGORITHMS.md: cost and latency scaled min–max over the
// models) and its library computes another (conduit's reward function:
// 1/(1 + cost in dollars), 1/(1 + latency in seconds)); both are offered,
// the documented one by default.
const (
	RewardDocs    = "docs"    // w_q·quality − w_c·cost' − w_l·latency', min–max scaled per sample
	RewardConduit = "conduit" // w_q·quality + w_c/(1 + cost $) + w_l/(1 + latency s)
)

// Rewards lists the rewards by name.
var Rewards = []string{RewardDocs, RewardConduit}

// rewards are the reward of every model on every sample. RewardDocs:
// w_q·quality − w_c·cost − w_l·latency, cost and latency normalised min–max
// over the models on that sample (0 for the cheapest or fastest, 1 for the
// dearest or slowest); RewardConduit: w_q·quality + w_c/(1 + cost in USD) +
// w_l/(1 + latency in seconds).
func rewards(m *Matrix, w Weights, kind string) [][]float64 {
	out := make([][]float64, len(m.Quality))
	for i := range m.Quality {
		row := make([]float64, len(m.Models))
		cost, lat := minMax(m.Cost[i]), minMax(m.Latency[i])
		for a := range row {
			if kind == RewardConduit {
				row[a] = w.Quality*m.Quality[i][a] + w.Cost/(1+m.Cost[i][a]) + w.Latency/(1+m.Latency[i][a]/1000)
				continue
			}
			row[a] = w.Quality*m.Quality[i][a] - w.Cost*cost(m.Cost[i][a]) - w.Latency*lat(m.Latency[i][a])
		}
		out[i] = row
	}
	return out
}

// rewardScale maps a reward onto 0–1, as the Beta-based algorithms need:
// RewardDocs lies in [−w_c − w_l, w_q], RewardConduit in [0, w_q + w_c + w_l].
func rewardScale(w Weights, kind string) func(float64) float64 {
	sum := w.Quality + w.Cost + w.Latency
	if kind == RewardConduit {
		return func(r float64) float64 { return r / sum }
	}
	return func(r float64) float64 { return (r + w.Cost + w.Latency) / sum }
}

// minMax is the min–max normalisation over values.
func minMax(values []float64) func(float64) float64 {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range values {
		lo, hi = min(lo, v), max(hi, v)
	}
	return func(v float64) float64 {
		if hi <= lo {
			return 0
		}
		return (v - lo) / (hi - lo)
	}
}
