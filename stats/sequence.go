package stats

import "math"

// Sequence is a confidence sequence for the mean of values in [0, 1]:
// intervals that hold the mean at every look at once with probability at
// least 1 − α, so a run may be watched after every sample and stopped when
// its interval is narrow or excludes a value, and stay honest. It is the
// hedged betting sequence of Waudby-Smith and Ramdas ("Estimating means
// of bounded random variables by betting", JRSS B 2023, Theorem 3 with
// the predictable plug-in bets of its section 5.1): for each candidate
// mean m, two bettors stake on the values lying above and below m; m
// leaves the interval once their mixed capital reaches 1/α, which, by
// Ville's inequality, happens for the true mean with probability at most
// α, whenever one looks.
type Sequence struct {
	alpha       float64
	plus, minus []float64 // each bettor's log capital, per candidate mean
	n           int
	sum         float64 // of the values
	sumSq       float64 // of (x_i − μ̂_{i}) ², for the plug-in variance
	lo, hi      float64 // the running intersection
	// first and last are the candidates not yet rejected: the running
	// intersection drops the others for good, so no bet on them is kept.
	first, last int
}

// sequenceGrid is how many steps the candidate means take across [0, 1]:
// an interval's ends are known to within 1/sequenceGrid, widened to be
// safe.
const sequenceGrid = 1000

// hedgeCap bounds a bet on m to hedgeCap/m (or /(1 − m)), so that no
// single value can ruin a bettor (the paper's c; 1/2 or 3/4 are its
// suggestions).
const hedgeCap = 0.5

// NewSequence starts a sequence at level α (0.05 for 95%).
func NewSequence(alpha float64) *Sequence {
	return &Sequence{alpha: alpha, plus: make([]float64, sequenceGrid+1), minus: make([]float64, sequenceGrid+1), lo: 0, hi: 1,
		first: 0, last: sequenceGrid}
}

// N is how many values the sequence has seen.
func (s *Sequence) N() int { return s.n }

// Mean is the mean of the values seen; NaN before the first.
func (s *Sequence) Mean() float64 {
	if s.n == 0 {
		return math.NaN()
	}
	return s.sum / float64(s.n)
}

// Add takes the next value, which is clamped to [0, 1].
func (s *Sequence) Add(x float64) {
	x = min(max(x, 0), 1)
	// The bet is predictable: made from the values before x.
	t := float64(s.n + 1)
	varPrev := (0.25 + s.sumSq) / t // σ̂²_{t−1}
	lambda := math.Sqrt(2 * math.Log(2/s.alpha) / (varPrev * t * math.Log(1+t)))
	for i := s.first; i <= s.last; i++ {
		m := float64(i) / sequenceGrid
		lp, lm := lambda, lambda
		if m > 0 {
			lp = min(lp, hedgeCap/m)
		}
		if m < 1 {
			lm = min(lm, hedgeCap/(1-m))
		}
		s.plus[i] += math.Log1p(lp * (x - m))
		s.minus[i] += math.Log1p(-lm * (x - m))
	}
	s.n++
	s.sum += x
	mu := (0.5 + s.sum) / (t + 1) // μ̂_t
	s.sumSq += (x - mu) * (x - mu)
	lo, hi := s.interval()
	s.lo, s.hi = max(s.lo, lo), min(s.hi, hi)
	if s.lo > s.hi { // only by the grid's rounding
		s.lo, s.hi = s.hi, s.lo
	}
}

// interval is the set of candidate means not yet rejected, widened by a
// step of the grid on each side; it keeps only those candidates alive.
func (s *Sequence) interval() (lo, hi float64) {
	bound := math.Log(1 / s.alpha)
	first, last := -1, -1
	for i := s.first; i <= s.last; i++ {
		// log(½K⁺ + ½K⁻) < log(1/α)
		a, b := s.plus[i], s.minus[i]
		mixed := math.Max(a, b) + math.Log1p(math.Exp(-math.Abs(a-b))) - math.Ln2
		if mixed < bound {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 { // every candidate rejected: only the grid's rounding
		m := s.Mean()
		i := int(math.Round(m * sequenceGrid))
		s.first, s.last = i, i
		return m, m
	}
	s.first, s.last = first, last
	return max(float64(first-1)/sequenceGrid, 0), min(float64(last+1)/sequenceGrid, 1)
}

// Interval is where the mean lies, valid at every look: the intersection
// of the intervals so far. [0, 1] before the first value.
func (s *Sequence) Interval() (lo, hi float64) { return s.lo, s.hi }

// PairedSequence is a confidence sequence for the mean difference a − b
// of paired values in [0, 1] each: the sequence of (a − b + 1)/2 mapped
// back to [−1, 1].
type PairedSequence struct{ s *Sequence }

// NewPairedSequence starts a paired sequence at level α.
func NewPairedSequence(alpha float64) *PairedSequence {
	return &PairedSequence{NewSequence(alpha)}
}

// Add takes the next pair.
func (p *PairedSequence) Add(a, b float64) { p.s.Add((a - b + 1) / 2) }

// N is how many pairs it has seen.
func (p *PairedSequence) N() int { return p.s.N() }

// Mean is the mean difference of the pairs seen.
func (p *PairedSequence) Mean() float64 { return 2*p.s.Mean() - 1 }

// Interval is where the mean difference lies, valid at every look.
func (p *PairedSequence) Interval() (lo, hi float64) {
	lo, hi = p.s.Interval()
	return 2*lo - 1, 2*hi - 1
}
