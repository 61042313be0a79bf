package runner_test

import (
	"context"
	"os"
	"testing"

	"assay"
	"assay/config"
	"assay/report"
	"assay/store"
	"assay/store/ingest"
)

// The examples the repository ships load and run as the README says.
func TestShippedExamplesLoadAndRun(t *testing.T) {
	f := newFixture(t, rubricJudge())
	// The run keeps ${OLLAMA_URL} as a reference and resolves it when it starts.
	t.Setenv("OLLAMA_URL", f.srv.URL)
	cfg, err := config.Load("../examples/ollama.yaml", os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	run := f.launch(cfg)
	if status, err := f.m.Execute(context.Background(), run.ID); err != nil || status != store.RunCompleted {
		r, _ := f.db.Run(context.Background(), run.ID)
		t.Fatalf("status %s, err %v: %s", status, err, r.Message)
	}
	s, _ := report.Summarize(context.Background(), f.db, run.ID)
	if s.Results != 8*2*3 || len(s.Conditions[0].Metrics) != 3 {
		t.Fatalf("summary %+v", s)
	}
	data, err := os.ReadFile("../examples/quiz.csv")
	if err != nil {
		t.Fatal(err)
	}
	p, err := ingest.Parse(data, ingest.Options{Filename: "quiz.csv"})
	if err != nil || p.Kind != assay.KindMCQ || len(p.Samples) != 4 {
		t.Fatalf("quiz.csv: %v %+v", err, p)
	}
}
