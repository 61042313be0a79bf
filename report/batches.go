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
	batches []store.RunBatch
}

func readBatches(ctx context.Context, db *store.DB, runID int64) (*batchesRead, error) {
	calls, err := db.BatchedCalls(ctx, runID)
	if err != nil {
		return nil, err
	}
	batches, err := db.RunBatches(ctx, runID)
	if err != nil {
		return nil, err
	}
	return &batchesRead{calls, batches}, nil
}

// countBatched sets each condition's BatchedCalls and the run's Batches;
// a run over several models adds its models' under their condition.
func (s *Summary) countBatched(b *batchesRead) {
	if b == nil {
		return
	}
	s.Batches = []Batch{}
	for _, k := range b.batches {
		s.Batches = append(s.Batches, Batch{ID: k.ProviderID, Provider: k.Provider, Status: k.Status, Lines: len(k.Lines)})
	}
	name := map[[2]string]string{}
	for i := range s.Conditions {
		c := &s.Conditions[i]
		n := b.calls[c.Name]
		c.BatchedCalls = &n
		name[[2]string{c.Base, c.Model}] = c.Name
	}
	for i := range s.byModel {
		g := &s.byModel[i]
		sum := 0
		for j := range g.Models {
			m := &g.Models[j]
			n := b.calls[name[[2]string{g.Name, m.Model}]]
			m.BatchedCalls, sum = &n, sum+n
		}
		g.BatchedCalls = &sum
	}
}
