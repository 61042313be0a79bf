package runner_test

import (
	"context"
	"testing"
	"time"

	"assay/store"
)

// A run whose process stopped is taken over only by a process that has its
// variables: one without leaves it as it is (not failed) and says what it
// lacks; one with them finishes it.
func TestATakeOverNeedsTheRunsVariables(t *testing.T) {
	f := newFixture(t, rubricJudge())
	withKey := func(n string) string {
		if n == "CLI_ONLY_KEY" {
			return "sk-test-0123456789"
		}
		return ""
	}
	cli := f.manager(withKey)
	cfg := f.config(f.qaDataset(2), "")
	cfg.Agent.APIKeyEnv = "CLI_ONLY_KEY"
	run, err := cli.CreateFromConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The CLI was killed before it began: its lease lapses.
	dead := store.Holder{ID: "killed", Host: "elsewhere", PID: 1, Program: "assay run"}
	if err := f.db.AcquireLease(context.Background(), run.ID, dead, time.Nanosecond, func(store.Holder) bool { return false }); err != nil {
		t.Fatal(err)
	}

	server := f.manager(func(string) string { return "" })
	ids, err := server.ResumeUnfinished(context.Background())
	if err != nil || len(ids) != 0 {
		t.Fatalf("a server without the key took over %v (%v)", ids, err)
	}
	got, _ := f.db.Run(context.Background(), run.ID)
	in, err := server.Interrupted(context.Background(), got)
	if err != nil || in == nil || len(in.Unset) != 1 || in.Unset[0].Name != "CLI_ONLY_KEY" || in.Last == nil || in.Last.Holder.Program != "assay run" {
		t.Fatalf("status %s; interruption %+v (%v)", got.Status, in, err)
	}
	if got.Status.Finished() {
		t.Fatalf("the run was ended: %s %q", got.Status, got.Message)
	}

	resumer := f.manager(withKey)
	if ids, err := resumer.ResumeUnfinished(context.Background()); err != nil || len(ids) != 1 {
		t.Fatalf("a process with the key took over %v (%v)", ids, err)
	}
	f.waitStatus(run.ID, store.RunCompleted)
	done, _ := f.db.Run(context.Background(), run.ID)
	if in, _ := resumer.Interrupted(context.Background(), done); in != nil {
		t.Errorf("a finished run reads as interrupted: %+v", in)
	}
}
