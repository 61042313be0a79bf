package main

import (
	"context"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"assay"
	"assay/config"
	"assay/store"
	"assay/tally"
)

// A database may hold a run stored before runs were bounded. A server
// started on it fails that run with the reason and stays up, instead of
// planning ten billion tasks at every start.
func TestServeFailsARunPastTheBoundsAndStaysUp(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "assay.db")
	seedDatasetAndCondition(t, dbPath)
	db, err := tally.Open(context.Background(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Defaults()
	cfg.Agent = config.Agent{Type: config.AgentOpenAI, Model: "m"}
	huge := &store.Run{Name: "huge", DatasetID: 1, Config: cfg,
		Conditions: []assay.Condition{{Name: "baseline"}}, Repetitions: 1_000_000_000, TotalTasks: 2_000_000_000}
	if err := db.CreateRun(context.Background(), huge); err != nil {
		t.Fatal(err)
	}
	db.Close()

	base := startServer(t, "--db", dbPath)
	deadline := time.Now().Add(30 * time.Second)
	for {
		db, err := tally.Open(context.Background(), dbPath)
		if err != nil {
			t.Fatal(err)
		}
		run, err := db.Run(context.Background(), huge.ID)
		db.Close()
		if err != nil {
			t.Fatal(err)
		}
		if run.Status == store.RunFailed {
			if run.Message != "execution.num_repetitions: must be at most 100, got 1000000000" {
				t.Errorf("reason %q", run.Message)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("run is %s", run.Status)
		}
		time.Sleep(10 * time.Millisecond)
	}
	resp, err := http.Get(base + "/runs/1")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the server after the failed run: %v %v", err, resp)
	}
	resp.Body.Close()
}
