package web

import (
	"cmp"
	"context"
	"slices"
	"sync"

	"assay/store"
)

// verdictCache keeps the verdicts of the runs reviewed last. Each review
// step, sample page and samples table filtered by review needs a run's
// verdicts, and reading 34,000 of them took a quarter of a second: a run's
// are read whole once, then only those given since the last one held.
type verdictCache struct {
	mu   sync.Mutex
	runs map[int64]*runReviews
}

// verdictCacheSize bounds the runs whose verdicts are kept.
const verdictCacheSize = 8

// runReviews are one run's verdicts as last read; one reader at a time
// brings them up to date.
type runReviews struct {
	mu   sync.Mutex
	held *heldReviews
}

// heldReviews are a run's verdicts at one version, shared by readers:
// nothing may change them.
type heldReviews struct {
	n    int
	last int64 // the number of the last given (store.Verdict.Seq)
	list []store.Review

	indexOnce sync.Once
	index     *reviewIndex
}

// reviews returns the index of the verdicts, made once.
func (h *heldReviews) reviews() *reviewIndex {
	h.indexOnce.Do(func() { h.index = newReviewIndex(h.list) })
	return h.index
}

// verdicts returns a run's verdicts, by score, oldest first, as
// store.Verdicts lists them; they are shared, and only read.
func (s *Server) reviewsOf(ctx context.Context, runID int64) (*heldReviews, error) {
	n, last, err := s.db.ReviewsVersion(ctx, runID)
	if err != nil {
		return nil, err
	}
	return s.reviewsAt(ctx, runID, n, last)
}

// reviewsAt is verdicts with the run's verdicts' version already read.
func (s *Server) reviewsAt(ctx context.Context, runID int64, n int, last int64) (*heldReviews, error) {
	c := &s.verdictsKept
	c.mu.Lock()
	rv := c.runs[runID]
	if rv == nil {
		if c.runs == nil {
			c.runs = map[int64]*runReviews{}
		}
		if len(c.runs) >= verdictCacheSize {
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
	if h := rv.held; h != nil && h.n == n && h.last == last {
		return h, nil
	}
	h, err := s.readReviews(ctx, runID, rv.held, n, last)
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
func (s *Server) readReviews(ctx context.Context, runID int64, held *heldReviews, n int, last int64) (*heldReviews, error) {
	if held != nil && last > held.last {
		since, err := s.db.ReviewsSince(ctx, runID, held.last)
		if err != nil {
			return nil, err
		}
		type key struct {
			score    int64
			reviewer string
		}
		fresh := make(map[key]bool, len(since))
		top := held.last
		for _, v := range since {
			fresh[key{v.ScoreID, v.Reviewer}] = true
			top = max(top, v.Seq)
		}
		list := make([]store.Review, 0, len(held.list)+len(since))
		for _, v := range held.list {
			if !fresh[key{v.ScoreID, v.Reviewer}] {
				list = append(list, v)
			}
		}
		list = append(list, since...)
		if len(list) == n && top == last {
			sortReviews(list)
			return &heldReviews{n: n, last: last, list: list}, nil
		}
	}
	list, err := s.db.Reviews(ctx, runID)
	if err != nil {
		return nil, err
	}
	h := &heldReviews{list: list}
	for _, v := range list {
		h.n++
		h.last = max(h.last, v.Seq)
	}
	return h, nil
}

// sortReviews orders verdicts as store.Verdicts does: by score, then as given.
func sortReviews(list []store.Review) {
	slices.SortFunc(list, func(a, b store.Review) int {
		return cmp.Or(cmp.Compare(a.ScoreID, b.ScoreID), cmp.Compare(a.Seq, b.Seq))
	})
}
