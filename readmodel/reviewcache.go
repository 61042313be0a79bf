package readmodel

import (
	"cmp"
	"context"
	"slices"
	"sync"

	"assay/store"
	"assay/tally"
)

// reviewCache keeps the reviews of the runs reviewed last. Each review
// step, sample page and samples table filtered by review needs a run's
// verdicts, and reading 34,000 of them took a quarter of a second: a run's
// are read whole once, then only those given since the last one held.
type reviewCache struct {
	mu   sync.Mutex
	runs map[int64]*runReviews
}

// reviewCacheSize bounds the runs whose reviews are kept.
const reviewCacheSize = 8

// runReviews are one run's reviews as last read; one reader at a time
// brings them up to date.
type runReviews struct {
	mu   sync.Mutex
	held *HeldReviews
}

// HeldReviews are a run's reviews at one version, shared by readers:
// nothing may change them.
type HeldReviews struct {
	N    int
	Last int64 // the number of the last given (store.Review.Seq)
	List []store.Review

	indexOnce sync.Once
	index     *ReviewIndex
}

// Index returns the index of the reviews, made once.
func (h *HeldReviews) Index() *ReviewIndex {
	h.indexOnce.Do(func() { h.index = newReviewIndex(h.List) })
	return h.index
}

// Reviews returns a run's reviews, by score, oldest first, as
// store.Verdicts lists them; they are shared, and only read.
func (m *Model) Reviews(ctx context.Context, runID int64) (*HeldReviews, error) {
	n, last, err := m.db.ReviewsVersion(ctx, runID)
	if err != nil {
		return nil, err
	}
	return m.reviewsAt(ctx, runID, n, last)
}

// reviewsAt is Reviews with the run's reviews' version already read.
func (m *Model) reviewsAt(ctx context.Context, runID int64, n int, last int64) (*HeldReviews, error) {
	c := &m.reviewsKept
	c.mu.Lock()
	rv := c.runs[runID]
	if rv == nil {
		if c.runs == nil {
			c.runs = map[int64]*runReviews{}
		}
		if len(c.runs) >= reviewCacheSize {
			for id := range c.runs { // any one: a run's verdicts are read whole again once in a while
				delete(c.runs, id)
				break
			}
		}
		rv = &runReviews{}
		c.runs[runID] = rv
	}
	c.mu.Unlock()

	rv.mu.Lock()
	defer rv.mu.Unlock()
	if h := rv.held; h != nil && h.N == n && h.Last == last {
		return h, nil
	}
	h, err := m.readReviews(ctx, runID, rv.held, n, last)
	if err != nil {
		return nil, err
	}
	rv.held = h
	return h, nil
}

// readReviews brings held up to the version n, last: the verdicts given
// since held's last replace theirs (a verdict given again) or join them.
// Whole when nothing is held, or when the count then disagrees (a verdict
// gone, or one given meanwhile).
func (m *Model) readReviews(ctx context.Context, runID int64, held *HeldReviews, n int, last int64) (*HeldReviews, error) {
	if held != nil && last > held.Last {
		since, err := m.db.ReviewsSince(ctx, runID, held.Last)
		if err != nil {
			return nil, err
		}
		type key struct {
			score    int64
			reviewer string
		}
		fresh := make(map[key]bool, len(since))
		top := held.Last
		for _, v := range since {
			fresh[key{v.ScoreID, v.Reviewer}] = true
			top = max(top, v.Seq)
		}
		list := make([]store.Review, 0, len(held.List)+len(since))
		for _, v := range held.List {
			if !fresh[key{v.ScoreID, v.Reviewer}] {
				list = append(list, v)
			}
		}
		list = append(list, since...)
		if len(list) == n && top == last {
			sortReviews(list)
			return &HeldReviews{N: n, Last: last, List: list}, nil
		}
	}
	list, err := m.db.Reviews(ctx, runID)
	if err != nil {
		return nil, err
	}
	h := &HeldReviews{List: list}
	for _, v := range list {
		h.N++
		h.Last = max(h.Last, v.Seq)
	}
	h.Last = max(h.Last, last) // a withdrawal's number is past every review's
	return h, nil
}

// sortReviews orders reviews as store.DB.Reviews does: by score, then as given.
func sortReviews(list []store.Review) {
	slices.SortFunc(list, func(a, b store.Review) int {
		return cmp.Or(cmp.Compare(a.ScoreID, b.ScoreID), cmp.Compare(a.Seq, b.Seq))
	})
}

// ReviewIndex is what the verdicts say of each sample under each condition.
type ReviewIndex struct {
	reviewed, overridden map[tally.SampleKey]bool
	by                   map[tally.SampleKey]map[string]bool
}

func newReviewIndex(verdicts []store.Review) *ReviewIndex {
	x := &ReviewIndex{reviewed: map[tally.SampleKey]bool{}, overridden: map[tally.SampleKey]bool{}, by: map[tally.SampleKey]map[string]bool{}}
	latest := map[int64]store.Review{}
	for _, v := range verdicts {
		k := tally.SampleKey{SampleRow: v.SampleRow, Condition: v.Condition}
		x.reviewed[k] = true
		if x.by[k] == nil {
			x.by[k] = map[string]bool{}
		}
		x.by[k][v.Reviewer] = true
		if p, ok := latest[v.ScoreID]; !ok || !v.At.Before(p.At) {
			latest[v.ScoreID] = v
		}
	}
	for _, v := range latest {
		if v.Verdict == store.VerdictOverride && v.Value != v.JudgeValue {
			x.overridden[tally.SampleKey{SampleRow: v.SampleRow, Condition: v.Condition}] = true
		}
	}
	return x
}

// Reviewed says whether a sample under a condition has a review.
func (x *ReviewIndex) Reviewed(k tally.SampleKey) bool { return x.reviewed[k] }

// Overridden says whether a review of a sample under a condition changed a value.
func (x *ReviewIndex) Overridden(k tally.SampleKey) bool { return x.overridden[k] }

// By says whether reviewer reviewed a sample under a condition.
func (x *ReviewIndex) By(k tally.SampleKey, reviewer string) bool { return x.by[k][reviewer] }
