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
	// single: the window is the one sample asked for. A run with a
	// stopping rule takes its samples in a random order, whole: a window
	// of 512 read for each of them made its calls wait (wall 9.8 times
	// the ideal at concurrency 200).
	single bool
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
	if i < s.from || i >= s.from+len(s.window) {
		from := i - i%windowSize
		to := min(from+windowSize, len(s.refs))
		if s.single {
			from, to = i, i+1
		}
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
