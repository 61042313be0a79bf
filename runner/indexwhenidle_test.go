package runner_test

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"assay/internal/pgtest"
	"assay/internal/storetest"
	"assay/runner"
	"assay/runner/llm/llmtest"
	"assay/store"
)

// A server brings the response index up to date when the last run it
// executes ends, so that a person's searches find the run indexed; a run
// executed in the foreground (assay run) leaves that to the searches, and
// the process ends with the run.
func TestTheLastRunToEndIndexesResponses(t *testing.T) {
	pgtest.SQLiteOnly(t, "the response index")
	ctx := context.Background()
	f := newFixture(t, llmtest.Text("The answer is 4."))
	evaluators := `evaluators: [{contains: "4"}]`
	state := func() (through, last int64) { return storetest.IndexState(t, filepath.Join(f.dir, "assay.db")) }

	// A run of 2,100 tasks (past the catch-up's threshold), their results
	// stored side by side as its workers would, then finished in the
	// foreground.
	foreground := f.launch(f.config(f.qaDataset(350), evaluators))
	storetest.FinishTasks(t, f.db, foreground, "The answer is 4.")
	if status, err := f.m.Execute(ctx, foreground.ID); err != nil || status != store.RunCompleted {
		t.Fatalf("status %s, err %v", status, err)
	}
	if through, last := state(); through != 0 {
		t.Fatalf("a foreground run indexed the responses through result %d of %d", through, last)
	}

	server := runner.New(f.db, runner.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), IndexWhenIdle: true,
		Sleep: func(ctx context.Context, d time.Duration) error { return ctx.Err() }})
	t.Cleanup(func() { server.Close(context.Background()) })
	background, err := server.CreateFromConfig(ctx, f.config(f.qaDataset(2), evaluators))
	if err != nil {
		t.Fatal(err)
	}
	if err := server.Start(background.ID); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { r, _ := f.db.Run(ctx, background.ID); return r.Status.Finished() })
	waitFor(t, func() bool { through, last := state(); return through == last })
}
