package store_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"assay"
	"assay/store"
	"assay/tally"
)

// Servers on one database taking a run's lease at the same moment: one of
// them has it, each time, and the others are told who.
func TestOneOfManyTakesALease(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t)
	run := seedRun(t, db, 1, 1, "a")
	var servers []*store.DB
	for range 4 {
		s, err := tally.Open(ctx, db.Path)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		servers = append(servers, s)
	}
	for round := range 15 {
		var wg sync.WaitGroup
		won := make(chan store.Holder, len(servers))
		start := make(chan struct{})
		for i, s := range servers {
			h := store.ThisProcess("server")
			h.PID = 1000 + i // not this process: alive until the lease expires
			h.Host = "node"
			wg.Go(func() {
				<-start
				err := s.AcquireLease(ctx, run.ID, h, time.Hour, nil)
				if err == nil {
					won <- h
				} else if assay.ErrorCode(err) != assay.ECONFLICT {
					t.Errorf("round %d: %v", round, err)
				}
			})
		}
		close(start)
		wg.Wait()
		close(won)
		var winners []store.Holder
		for h := range won {
			winners = append(winners, h)
		}
		if len(winners) != 1 {
			t.Fatalf("round %d: %d servers took the lease", round, len(winners))
		}
		if l, err := db.RunLease(ctx, run.ID); err != nil || l.Holder.ID != winners[0].ID {
			t.Fatalf("round %d: the lease is %+v (%v), the winner %s", round, l, err, winners[0].ID)
		}
		if err := db.ReleaseLease(ctx, run.ID, winners[0]); err != nil {
			t.Fatal(err)
		}
	}
}
