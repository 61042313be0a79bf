package store_test

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"assay"
	"assay/internal/pgtest"
	"assay/store"
	"assay/tally"
)

// filePageSize reads the page size from a database file's header.
func filePageSize(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	header := make([]byte, 100)
	if _, err := f.ReadAt(header, 0); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return int(binary.BigEndian.Uint16(header[16:18]))
}

// A database assay makes has 8 KB pages; one made before, with SQLite's
// 4 KB, keeps them and serves as before, and its backup has 8 KB pages and
// the same rows.
func TestPageSize(t *testing.T) {
	pgtest.SQLiteOnly(t, "its file's page size")
	ctx := context.Background()
	dir := t.TempDir()
	fresh := filepath.Join(dir, "fresh.db")
	db, err := tally.Open(ctx, fresh)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if got := filePageSize(t, fresh); got != 8192 {
		t.Errorf("a new database has pages of %d bytes, want 8192", got)
	}

	old := filepath.Join(dir, "old.db")
	raw, err := sql.Open("sqlite", "file:"+old)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`PRAGMA page_size = 4096`); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`PRAGMA journal_mode = WAL`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	db, err = tally.Open(ctx, old)
	if err != nil {
		t.Fatal(err)
	}
	d := &store.Dataset{Name: "kept", Kind: assay.KindQA, SHA256: "pages", Format: "jsonl"}
	if _, err := db.CreateDataset(ctx, d, testSamples(300)); err != nil {
		t.Fatal(err)
	}
	copyPath := filepath.Join(dir, "copy.db")
	if err := db.Backup(ctx, copyPath); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if got := filePageSize(t, old); got != 4096 {
		t.Errorf("the older database has pages of %d bytes after opening, want its 4096", got)
	}
	if got := filePageSize(t, copyPath); got != 8192 {
		t.Errorf("the backup of a database of 4 KB pages has pages of %d bytes, want 8192", got)
	}
	c, err := tally.Open(ctx, copyPath)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	samples, err := c.Samples(ctx, d.ID, 0, 0)
	if err != nil || len(samples) != 300 || samples[299].SampleID != testSamples(300)[299].SampleID {
		t.Errorf("the copy's samples: %d, %v", len(samples), err)
	}
}

// Processes opening a new database at once all open it: one makes the file
// while the others wait for its lock (a server and a run started together
// on a new file met "database is locked").
func TestNewDatabaseOpenedAtOnce(t *testing.T) {
	pgtest.SQLiteOnly(t, "its file's page size")
	ctx := context.Background()
	for round := range 20 {
		path := filepath.Join(t.TempDir(), fmt.Sprintf("new-%d.db", round))
		errs := make(chan error, 6)
		var wg sync.WaitGroup
		for range 6 {
			wg.Go(func() {
				db, err := tally.Open(ctx, path)
				if err == nil {
					err = db.Close()
				}
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
		if got := filePageSize(t, path); got != 8192 {
			t.Errorf("round %d: pages of %d bytes", round, got)
		}
	}
}
