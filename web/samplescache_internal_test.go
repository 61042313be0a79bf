package web

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"assay"
	"assay/store"
	"assay/tally"
)

// The report page of a finished run makes its samples table in the
// background, for the person reading it to open next; a running run's
// table, which changes with each result, is made when asked for.
func TestReportMakesAFinishedRunsSamplesTable(t *testing.T) {
	db, d, rows := storedSamples(t, 3)
	finished, running := storedRun(t, db, d, rows, store.RunCompleted), storedRun(t, db, d, rows, store.RunRunning)
	s, err := New(db, Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	kept := s.model.TableKept
	show := func(run int64) { t.Helper(); getOK(t, s, fmt.Sprintf("/runs/%d", run)) }
	show(running)
	if kept(running) {
		t.Error("a running run's samples table was made with its report")
	}
	// The table is made once the page is sent, not meanwhile: it took the
	// second core from the report's first request.
	req := httptest.NewRequest(http.MethodGet, fmt.Sprintf("/runs/%d", finished), nil)
	req.Host = "127.0.0.1"
	w := &firstWrite{ResponseRecorder: httptest.NewRecorder(), at: func() {
		s.work.Wait()
		if kept(finished) {
			t.Error("the samples table was made before the report page was sent")
		}
	}}
	s.Handler().ServeHTTP(w, req)
	if w.Code != http.StatusOK {
		t.Fatalf("GET /runs/%d: %d", finished, w.Code)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !kept(finished) {
		if time.Now().After(deadline) {
			t.Fatal("30 s after its report was shown, the finished run's samples table is not made")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// getOK asks s for the page at path, which must answer 200, and returns it.
func getOK(t *testing.T, s *Server, path string) string {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.Host = "127.0.0.1"
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET %s: %d", path, rec.Code)
	}
	return rec.Body.String()
}

// storedRun stores a run with a result for each sample, in that status.
func storedRun(t *testing.T, db *store.DB, d *store.Dataset, rows []store.Sample, status store.RunStatus) int64 {
	t.Helper()
	ctx := context.Background()
	run := &store.Run{DatasetID: d.ID, Repetitions: 1, TotalTasks: len(rows), Conditions: []assay.Condition{{Name: "a"}}}
	if err := db.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	for _, s := range rows {
		r := &store.Result{RunID: run.ID, SampleRow: s.ID, Condition: "a", Repetition: 1, Response: "answer",
			Judgements: []store.Judgement{{Evaluator: "rubric", Scores: []store.Score{{Metric: "accuracy", Value: 4}}}}}
		if _, err := db.SaveResult(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.SetRunStatus(ctx, run.ID, status, ""); err != nil {
		t.Fatal(err)
	}
	return run.ID
}

// The samples tables kept hold no more than their budget of results
// together: opening a third run's table forgets the table read longest
// ago, not the one read again meanwhile.
func TestSamplesTablesKeptWithinTheirResultsBudget(t *testing.T) {
	db, d, rows := storedSamples(t, 3)
	runs := []int64{storedRun(t, db, d, rows, store.RunCompleted), storedRun(t, db, d, rows, store.RunCompleted),
		storedRun(t, db, d, rows, store.RunCompleted)}
	s, err := New(db, Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	s.model.KeepTables(6) // two runs of three results
	for _, run := range []int64{runs[0], runs[1], runs[0], runs[2]} {
		getOK(t, s, fmt.Sprintf("/runs/%d/samples", run))
	}
	for i, want := range []bool{true, false, true} {
		if ok := s.model.TableKept(runs[i]); ok != want {
			t.Errorf("run %d's table kept: %v, want %v", i+1, ok, want)
		}
	}
}

// firstWrite calls at before the first bytes of the response are written.
type firstWrite struct {
	*httptest.ResponseRecorder
	at      func()
	written bool
}

func (w *firstWrite) Write(p []byte) (int, error) {
	if !w.written {
		w.written = true
		w.at()
	}
	return w.ResponseRecorder.Write(p)
}

// storedSamples opens a database and stores a dataset of n samples in it.
func storedSamples(t *testing.T, n int) (*store.DB, *store.Dataset, []store.Sample) {
	t.Helper()
	db, err := tally.Open(context.Background(), filepath.Join(t.TempDir(), "assay.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	var samples []store.Sample
	for i := range n {
		samples = append(samples, store.Sample{Ordinal: i + 1, SampleID: fmt.Sprint("s", i), Input: "q", Reference: "r"})
	}
	d := &store.Dataset{Name: "d", Kind: assay.KindQA, SHA256: "feed", Format: "jsonl"}
	if _, err := db.CreateDataset(context.Background(), d, samples); err != nil {
		t.Fatal(err)
	}
	rows, err := db.Samples(context.Background(), d.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	return db, d, rows
}
