package ingest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"assay"
	"assay/store"
)

// ReadFile reads a file whole, and refuses one over the limit, a regular
// file or an endless device, without holding more than the limit.
func TestReadFileReadsWholeAndStopsAtTheLimit(t *testing.T) {
	dir := t.TempDir()
	want := bytes.Repeat([]byte(`{"question": "What is 2 + 2?", "answer": "4"}`+"\n"), 5000)
	path := filepath.Join(dir, "qa.jsonl")
	if err := os.WriteFile(path, want, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadFile(path)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes (%v), want the file's %d", len(got), err, len(want))
	}
	empty := filepath.Join(dir, "empty.jsonl")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadFile(empty); err != nil || len(got) != 0 {
		t.Errorf("an empty file read %d bytes, %v", len(got), err)
	}
	big := filepath.Join(dir, "big.jsonl")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, DefaultMaxBytes+1); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{big, "/dev/zero"} {
		_, err := ReadFile(p)
		var se *assay.Error
		if !errors.As(err, &se) || se.Code != assay.ETOOLARGE {
			t.Errorf("%s: %v, want a file over the limit", p, err)
		}
	}
	if _, err := ReadFile(filepath.Join(dir, "missing.jsonl")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
}

// /dev/zero is refused without being held: it is copied into a temporary
// file up to the limit, not read into a buffer that doubles as it grows
// (288 MB before it was refused).
func TestAnEndlessDeviceIsRefusedWithoutItsBytesInMemory(t *testing.T) {
	for _, read := range []func() error{
		func() error { _, err := ReadFile("/dev/zero"); return err },
		func() error { _, _, _, err := mapFile("/dev/zero"); return err },
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		err := read()
		runtime.ReadMemStats(&after)
		if assay.ErrorCode(err) != assay.ETOOLARGE {
			t.Errorf("/dev/zero: %v", err)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
			t.Errorf("refusing /dev/zero allocated %d MB", alloc>>20)
		}
	}
}

// ImportFile stores what Import stores from the file's bytes, from a
// mapped file and from one that cannot be mapped (a pipe).
func TestImportFileStoresWhatImportStores(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "assay.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	path := filepath.Join(t.TempDir(), "gsm.jsonl")
	var data []byte
	for i := range 300 {
		data = fmt.Appendf(data, `{"question": "What is %d × 3?", "answer": "#### %d"}`+"\n", i, 3*i)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	d, created, err := ImportFile(ctx, db, path, Options{}, "")
	if err != nil || !created {
		t.Fatalf("import: %v (created %v)", err, created)
	}
	want, err := Parse(data, Options{Filename: path})
	if err != nil {
		t.Fatal(err)
	}
	got, err := db.Samples(ctx, d.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if d.SHA256 != want.SHA256 || d.Kind != want.Kind || d.Name != "gsm" || len(got) != len(want.Samples) {
		t.Fatalf("stored %s %s %q with %d samples, want %s %s \"gsm\" with %d", d.SHA256, d.Kind, d.Name, len(got), want.SHA256, want.Kind, len(want.Samples))
	}
	for i := range got {
		if got[i].Input != want.Samples[i].Input || got[i].Reference != want.Samples[i].Reference {
			t.Fatalf("sample %d: %q / %q, want %q / %q", i, got[i].Input, got[i].Reference, want.Samples[i].Input, want.Samples[i].Reference)
		}
	}
	// The same bytes through a pipe, which is read: the dataset is found.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	go func() { w.Write(data); w.Close() }()
	defer r.Close()
	again, created, err := ImportFile(ctx, db, fmt.Sprintf("/proc/self/fd/%d", r.Fd()), Options{}, "")
	if err != nil || created || again.ID != d.ID {
		t.Fatalf("through a pipe: %v, created %v, dataset %v, want %d found", err, created, again, d.ID)
	}
}

// A file cut short while it is read is an error that names it, nothing
// is stored, and the process goes on.
func TestImportFileCutShortStoresNothing(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "assay.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	path := filepath.Join(t.TempDir(), "qa.jsonl")
	data := bytes.Repeat([]byte(`{"question": "What is the capital of France?", "answer": "Paris"}`+"\n"), 2000)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	defer func(f func(string)) { mapped = f }(mapped)
	mapped = func(string) {
		if err := os.Truncate(path, 4096); err != nil {
			t.Fatal(err)
		}
	}
	_, _, err = ImportFile(ctx, db, path, Options{}, "")
	if se, ok := errors.AsType[*assay.Error](err); !ok || se.Code != assay.EINVALID || !strings.Contains(err.Error(), path+": the file was cut short") {
		t.Fatalf("import of a file cut short: %v", err)
	}
	if list, err := db.Datasets(ctx); err != nil || len(list) != 0 {
		t.Errorf("stored %d datasets (%v), want none", len(list), err)
	}
}
