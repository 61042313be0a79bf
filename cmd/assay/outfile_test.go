package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"assay/tally"
)

// `assay export -o /dev/null`, the usual way to time an export, leaves the
// device a device (a copy of it made with mknod in a temporary folder);
// `-o -` is standard output.
func TestExportToADeviceWritesThrough(t *testing.T) {
	db, id := finishedRun(t, 2)
	dev := filepath.Join(t.TempDir(), "null")
	if err := syscall.Mknod(dev, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		t.Fatalf("mknod (the tests run as root in CI): %v", err)
	}
	for _, format := range []string{"json", "csv", "html"} {
		args := []string{"export", "--db", db, "--run", fmt.Sprint(id), "--format", format, "-o", dev}
		if err := run(context.Background(), args, &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
			t.Fatalf("%s to a device: %v", format, err)
		}
		if st, err := os.Lstat(dev); err != nil || st.Mode()&os.ModeCharDevice == 0 {
			t.Fatalf("after the %s export the device is %v (%v)", format, st.Mode(), err)
		}
	}
	var stdout bytes.Buffer
	if err := run(context.Background(), []string{"export", "--db", db, "--run", fmt.Sprint(id), "-o", "-"}, &stdout, &bytes.Buffer{}); err != nil ||
		!strings.HasPrefix(stdout.String(), "{") {
		t.Errorf("-o - wrote %d bytes to standard output: %v", stdout.Len(), err)
	}
	if _, err := os.Stat("-"); err == nil {
		os.Remove("-")
		t.Error("-o - made a file named -")
	}
}

// A backup written over its own database — by its name, through a link, a
// hard link, or onto its write-ahead log — is refused with exit status 1
// and the database is left whole; a device is written through.
func TestBackupToItselfIsRefused(t *testing.T) {
	db, id := finishedRun(t, 2)
	before := summaryJSON(t, db, id)
	dir := filepath.Dir(db)
	link := filepath.Join(dir, "link.db")
	hard := filepath.Join(dir, "hard.db")
	if err := os.Symlink(db, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(db, hard); err != nil {
		t.Fatal(err)
	}
	// An open database keeps its write-ahead log, as a server does.
	s, err := tally.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, to := range []string{db, link, hard, db + "-wal"} {
		var stderr bytes.Buffer
		err := run(context.Background(), []string{"backup", "--db", db, "--to", to}, &bytes.Buffer{}, &stderr)
		if exitCodeOf(err) != 1 || !strings.Contains(err.Error(), "a file of the database being backed up") {
			t.Errorf("backup to %s: exit %d, %v", filepath.Base(to), exitCodeOf(err), err)
		}
	}
	if got := summaryJSON(t, db, id); got != before {
		t.Error("the database changed")
	}
	raw, err := sql.Open("sqlite", "file:"+db+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var result string
	if err := raw.QueryRow(`PRAGMA integrity_check`).Scan(&result); err != nil || result != "ok" {
		t.Errorf("integrity: %q %v", result, err)
	}
	dev := filepath.Join(t.TempDir(), "null")
	if err := syscall.Mknod(dev, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		t.Fatalf("mknod: %v", err)
	}
	if err := run(context.Background(), []string{"backup", "--db", db, "--to", dev}, &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
		t.Fatalf("backup to a device: %v", err)
	}
	if st, _ := os.Lstat(dev); st.Mode()&os.ModeCharDevice == 0 {
		t.Errorf("the device became %v", st.Mode())
	}
	entries, _ := filepath.Glob(filepath.Join(dir, ".assay-*"))
	if len(entries) != 0 {
		t.Errorf("temporary files left: %v", entries)
	}
}
