package runner

import (
	"context"
	"fmt"

	"assay/store"
)

// windowSize is how many samples a run reads at a time.
const windowSize = 512

// sampleSource hands a run's tasks their samples a window at a time. A
// run holds every sample's row and id; their texts come from the store as
// the tasks reach them: holding them all, a run of 100,000 multiple-choice
// questions peaked at 240 MB.
type sampleSource struct {
	db      *store.DB
	dataset int64
	refs    []store.SampleRef // every sample, in file order
	from    int               // the place in refs of window[0]
	window  []store.Sample
	// order, for a run with a stopping rule, is the order it takes its
	// samples in (their places in refs), and at each place's position in
	// it: the window is then the next windowSize samples of that order.
	// A window read for each sample made the calls wait, and a sample
	// read at a time cost a query each.
	order   []int
	at      map[int]int
	byPlace map[int]*store.Sample // the window, by place
}

// inOrder makes s read its samples in order, a window at a time.
func (s *sampleSource) inOrder(order []int) {
	s.order, s.at = order, make(map[int]int, len(order))
	for k, i := range order {
		s.at[i] = k
	}
}

// getInOrder is get for a run that takes its samples in s.order.
func (s *sampleSource) getInOrder(ctx context.Context, i int) (*store.Sample, error) {
	if smp, ok := s.byPlace[i]; ok {
		return smp, nil
	}
	k, ok := s.at[i]
	if !ok {
		return nil, fmt.Errorf("dataset %d: no sample at place %d", s.dataset, i)
	}
	places := s.order[k:min(k+windowSize, len(s.order))]
	ordinals := make([]int, len(places))
	place := make(map[int]int, len(places)) // by ordinal
	for j, p := range places {
		ordinals[j] = s.refs[p].Ordinal
		place[ordinals[j]] = p
	}
	window, err := s.db.SamplesAt(ctx, s.dataset, ordinals)
	if err != nil {
		return nil, err
	}
	if len(window) != len(places) {
		return nil, fmt.Errorf("dataset %d: %d of %d samples found: the dataset changed during the run", s.dataset, len(window), len(places))
	}
	s.byPlace = make(map[int]*store.Sample, len(window))
	for j := range window {
		s.byPlace[place[window[j].Ordinal]] = &window[j]
	}
	return s.byPlace[i], nil
}

func newSampleSource(ctx context.Context, db *store.DB, datasetID int64) (*sampleSource, error) {
	refs, err := db.SampleRefs(ctx, datasetID)
	if err != nil {
		return nil, err
	}
	return &sampleSource{db: db, dataset: datasetID, refs: refs}, nil
}

// get returns the sample at place i of refs, reading its window when it
// is not the one held. The tasks given a sample keep their window.
func (s *sampleSource) get(ctx context.Context, i int) (*store.Sample, error) {
	if s.order != nil {
		return s.getInOrder(ctx, i)
	}
	if i < s.from || i >= s.from+len(s.window) {
		from := i - i%windowSize
		to := min(from+windowSize, len(s.refs))
		window, err := s.db.SamplesBetween(ctx, s.dataset, s.refs[from].Ordinal, s.refs[to-1].Ordinal)
		if err != nil {
			return nil, err
		}
		if len(window) != to-from {
			return nil, fmt.Errorf("dataset %d: %d samples at ordinals %d to %d, want %d: the dataset changed during the run",
				s.dataset, len(window), s.refs[from].Ordinal, s.refs[to-1].Ordinal, to-from)
		}
		s.window, s.from = window, from
	}
	return &s.window[i-s.from], nil
}
