package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Watched after every value, a confidence sequence misses the true mean in
// at most α of the streams; a fixed-size 95% interval watched the same way
// misses it far more often — the error that stopping on a peeked p-value
// makes.
func TestSequenceHoldsAtEveryLook(t *testing.T) {
	const length, alpha = 200, 0.05
	for _, tc := range []struct {
		p       float64
		streams int
	}{{0.3, 1000}, {0.05, 200}} {
		p, streams := tc.p, tc.streams
		rng := rand.New(rand.NewPCG(7, uint64(p*1000)))
		missed, naiveMissed := 0, 0
		for range streams {
			s := NewSequence(alpha)
			sum := 0.0
			miss, naive := false, false
			for i := 1; i <= length; i++ {
				x := 0.0
				if rng.Float64() < p {
					x = 1
				}
				s.Add(x)
				sum += x
				if lo, hi := s.Interval(); lo > p || hi < p {
					miss = true
				}
				if m := sum / float64(i); i >= 10 {
					half := 1.96 * math.Sqrt(max(m*(1-m), 1e-9)/float64(i))
					if m-half > p || m+half < p {
						naive = true
					}
				}
			}
			if miss {
				missed++
			}
			if naive {
				naiveMissed++
			}
		}
		rate, naiveRate := float64(missed)/float64(streams), float64(naiveMissed)/float64(streams)
		t.Logf("p = %v: the sequence missed in %.3f of streams, a fixed-size interval watched each time in %.3f", p, rate, naiveRate)
		if rate > alpha {
			t.Errorf("p = %v: missed the mean in %.3f of the streams at some look, want at most %v", p, rate, alpha)
		}
		if naiveRate < 2*alpha {
			t.Errorf("p = %v: the fixed-size interval watched at every look missed in only %.3f", p, naiveRate)
		}
	}
}

func TestSequenceNarrows(t *testing.T) {
	s := NewSequence(0.05)
	if lo, hi := s.Interval(); lo != 0 || hi != 1 {
		t.Fatalf("before any value: [%v, %v]", lo, hi)
	}
	// One value rejects no mean: by hand at m = 0.5 the bets are capped at
	// 1, and the capitals 1.5 and 0.5 mix to 1, far from 1/α = 20.
	s.Add(1)
	if lo, hi := s.Interval(); lo != 0 || hi != 1 {
		t.Errorf("after one value: [%v, %v], want [0, 1]", lo, hi)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	prev := 1.0
	for n := 2; n <= 2000; n++ {
		x := 0.0
		if rng.Float64() < 0.5 {
			x = 1
		}
		s.Add(x)
		lo, hi := s.Interval()
		if hi-lo > prev+1e-12 {
			t.Fatalf("widened at %d: %v after %v", n, hi-lo, prev)
		}
		prev = hi - lo
		if n == 2000 {
			// A fixed-size 95% interval of 2,000 fair coins is ±0.022;
			// valid at every look costs a factor, not an order.
			if half := (hi - lo) / 2; half < 0.022 || half > 0.06 {
				t.Errorf("half-width after 2000 fair coins: %.4f", half)
			}
			if m := s.Mean(); m < lo || m > hi {
				t.Errorf("the mean %v is outside [%v, %v]", m, lo, hi)
			}
		}
	}
}

func TestPairedSequence(t *testing.T) {
	p := NewPairedSequence(0.05)
	rng := rand.New(rand.NewPCG(3, 4))
	decided := 0
	for n := 1; n <= 400; n++ {
		// a passes 80%, b 50%, on the same samples.
		u := rng.Float64()
		a, b := 0.0, 0.0
		if u < 0.8 {
			a = 1
		}
		if u < 0.5 {
			b = 1
		}
		p.Add(a, b)
		if lo, _ := p.Interval(); lo > 0 && decided == 0 {
			decided = n
		}
	}
	lo, hi := p.Interval()
	if lo > 0.3 || hi < 0.3 || lo <= 0 {
		t.Errorf("the difference 0.3 after 400 pairs: [%v, %v]", lo, hi)
	}
	if decided == 0 || decided > 150 {
		t.Errorf("a − b > 0 decided after %d pairs", decided)
	}
	t.Logf("decided after %d pairs; [%.3f, %.3f] after 400", decided, lo, hi)
}
