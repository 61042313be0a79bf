// Package storetest fills a database as a run's workers would, for tests
// and benchmarks that need many results without making their calls.
package storetest

import (
	"context"
	"database/sql"
	"sync"
	"testing"

	"assay/store"
)

// FinishTasks stores a result answering response for each of run's tasks,
// sixteen writers at once so that their commits batch as a run's do.
func FinishTasks(t testing.TB, db *store.DB, run *store.Run, response string) {
	t.Helper()
	ctx := context.Background()
	samples, err := db.Samples(ctx, run.DatasetID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	keys := make(chan store.TaskKey)
	errs := make(chan error, 16)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for k := range keys {
				_, err := db.SaveResult(ctx, &store.Result{RunID: run.ID, SampleRow: k.SampleRow, Condition: k.Condition,
					Repetition: k.Repetition, Response: response, Attempts: 1})
				if err != nil {
					errs <- err
					for range keys {
					}
					return
				}
			}
		})
	}
	for rep := 1; rep <= run.Repetitions; rep++ {
		for _, s := range samples {
			for _, c := range run.Conditions {
				keys <- store.TaskKey{SampleRow: s.ID, Condition: c.Name, Repetition: rep}
			}
		}
	}
	close(keys)
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
}

// IndexState reads, from the database file at path, where the response
// index has reached and the last result's id.
func IndexState(t testing.TB, path string) (through, last int64) {
	t.Helper()
	raw, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	err = raw.QueryRow(`SELECT (SELECT indexed_through FROM response_search_state), (SELECT coalesce(max(id), 0) FROM results)`).Scan(&through, &last)
	if err != nil {
		t.Fatal(err)
	}
	return through, last
}
