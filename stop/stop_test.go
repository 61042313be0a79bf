package stop

import (
	"math/rand/v2"
	"slices"
	"testing"

	"assay/config"
	"assay/store"
)

func scored(v float64) *store.Result {
	return &store.Result{Judgements: []store.Judgement{{Scores: []store.Score{{Metric: "exact_match", Value: v}}}}}
}

// simulate runs a tracker over n samples of two conditions that pass with
// chances pa and pb, each sample's results arriving in a shuffled order,
// and returns where it stopped (n when it did not) and the winner then.
func simulate(rng *rand.Rand, rule config.Stop, pa, pb float64, n int) (at int, winner string) {
	metric := config.MetricRef{Evaluator: "exact_match", Name: "exact_match", Scale: config.ScalePass}
	order := Order(n, rng.Uint64())
	t := NewTracker(rule, metric, []string{"a", "b"}, 1, order)
	bit := func(p float64) float64 {
		if rng.Float64() < p {
			return 1
		}
		return 0
	}
	for k, i := range order {
		t.Add(i, "b", scored(bit(pb)))
		t.Add(i, "a", scored(bit(pa)))
		if ok, _ := t.Decided(); ok {
			for _, iv := range t.Intervals95() {
				if iv.Versus == "b" {
					switch {
					case iv.Lo > 0:
						return k + 1, "a"
					case iv.Hi < 0:
						return k + 1, "b"
					}
				}
			}
			return k + 1, "none"
		}
	}
	return n, ""
}

// Conditions at 0.9 and 0.6 stop early with the right winner; two equal
// conditions run to the plan but for a few false winners, at most α of the
// runs; with a margin they may stop as "no difference".
func TestDecisions(t *testing.T) {
	const runs, n = 200, 300
	rng := rand.New(rand.NewPCG(11, 12))
	rule := config.Stop{When: config.StopDecided, Metric: "exact_match", Alpha: 0.05, MinSamples: 20}
	var stops []int
	for range runs {
		at, winner := simulate(rng, rule, 0.9, 0.6, n)
		if winner != "a" {
			t.Fatalf("0.9 against 0.6: stopped at %d with winner %q", at, winner)
		}
		stops = append(stops, at)
	}
	slices.Sort(stops)
	t.Logf("0.9 against 0.6: stopped after %d samples at the median, %d at most, of %d", stops[runs/2], stops[runs-1], n)
	if stops[runs-1] >= n/2 {
		t.Errorf("0.9 against 0.6 took up to %d of %d samples", stops[runs-1], n)
	}

	rng = rand.New(rand.NewPCG(21, 22))
	false_ := 0
	for range runs {
		if _, winner := simulate(rng, rule, 0.7, 0.7, n); winner == "a" || winner == "b" {
			false_++
		}
	}
	t.Logf("0.7 against 0.7: a false winner in %d of %d runs", false_, runs)
	if float64(false_)/runs > 0.05 {
		t.Errorf("false winners in %d of %d runs, want at most 5%%", false_, runs)
	}

	rule.Margin = 0.15
	same, wrong := 0, 0
	for range 30 {
		switch _, winner := simulate(rng, rule, 0.7, 0.7, 1500); winner {
		case "none":
			same++
		case "a", "b":
			wrong++
		}
	}
	t.Logf("0.7 against 0.7 with a margin of 0.15: %d of 30 stopped as no difference, %d with a false winner", same, wrong)
	if same < 25 || wrong > 2 {
		t.Errorf("equal conditions with a margin of 0.15: %d of 30 stopped as no difference, %d with a winner", same, wrong)
	}
}

// The order is a permutation, the same for a seed, another for another.
func TestOrder(t *testing.T) {
	a, b, c := Order(100, 1), Order(100, 1), Order(100, 2)
	if !slices.Equal(a, b) || slices.Equal(a, c) {
		t.Error("the order does not follow its seed")
	}
	s := slices.Clone(a)
	slices.Sort(s)
	for i, v := range s {
		if v != i {
			t.Fatalf("not a permutation: %v", a)
		}
	}
}

// A sample enters the sequences only once it and those before it in the
// run's order are whole: what came back first does not choose what counts.
func TestWholeSamplesInOrder(t *testing.T) {
	metric := config.MetricRef{Evaluator: "exact_match", Name: "exact_match", Scale: config.ScalePass}
	tr := NewTracker(config.Stop{When: config.StopPrecise, Metric: "exact_match", HalfWidth: 0.1}, metric, []string{"a", "b"}, 2, []int{2, 0, 1})
	tr.Add(0, "a", scored(1))
	tr.Add(0, "a", scored(1))
	tr.Add(0, "b", scored(1))
	tr.Add(0, "b", scored(0))
	if tr.Samples() != 0 {
		t.Errorf("sample 0 counted before sample 2, first in the order: %d", tr.Samples())
	}
	for range 2 {
		tr.Add(2, "a", scored(0))
		tr.Add(2, "b", scored(1))
	}
	if tr.Samples() != 2 {
		t.Errorf("%d samples in the sequences, want 2", tr.Samples())
	}
	iv := tr.Intervals95()
	if len(iv) != 3 || iv[0].Mean != 0.5 || iv[1].Mean != 0.75 || iv[2].Mean != -0.25 {
		t.Errorf("intervals %+v: want means 0.5, 0.75 and a − b = −0.25", iv)
	}
}
