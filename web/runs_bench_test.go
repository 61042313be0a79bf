package web_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"assay/tally"
	"assay/web"
)

// BenchmarkRunsList serves the runs list of a team whose CI has added
// 10,000 runs: its first page, a page far down, a search and the API's
// page of fifty.
func BenchmarkRunsList(b *testing.B) {
	const runs = 10000
	db, err := tally.Open(context.Background(), filepath.Join(b.TempDir(), "assay.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	start := time.Now()
	manyRuns(b, db, runs)
	fmt.Printf("stored %d runs in %.1f s\n", runs, time.Since(start).Seconds())
	s, err := web.New(db, web.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	for _, p := range []struct{ name, path string }{
		{"first-page", "/runs"},
		{"page-150", "/runs?page=150"},
		{"search", "/runs?q=variant-77"},
		{"api-page", "/api/runs?limit=50"},
	} {
		b.Run(p.name, func(b *testing.B) { benchPage(b, db, s.Handler(), p.path) })
	}
}
