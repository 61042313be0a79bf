package report

import (
	"context"

	"assay/store"
)

// Batch is a batch a run's calls were sent in, as the summary lists it.
type Batch struct {
	ID       string `json:"id"`
	Provider string `json:"provider"`
	Status   string `json:"status"`
	Lines    int    `json:"lines"`
}

// batchesRead is what a run whose calls went in batches read of them.
type batchesRead struct {
	calls   map[string]int // by condition
	batches []store.BatchCount
}

func readBatches(ctx context.Context, db *store.DB, runID int64) (*batchesRead, error) {
	calls, err := db.BatchedCalls(ctx, runID)
	if err != nil {
		return nil, err
	}
	batches, err := db.BatchCounts(ctx, runID)
	if err != nil {
		return nil, err
	}
	return &batchesRead{calls, batches}, nil
}

// countBatched sets each condition's BatchedCalls and the run's Batches.
func (s *Summary) countBatched(b *batchesRead) {
	if b == nil {
		return
	}
	s.Batches = []Batch{}
	for _, k := range b.batches {
		s.Batches = append(s.Batches, Batch{ID: k.ProviderID, Provider: k.Provider, Status: k.Status, Lines: k.Lines})
	}
	s.setCounts(func(name string) int { return b.calls[name] }, func(c *ConditionSummary, n int) { c.BatchedCalls = &n })
}
