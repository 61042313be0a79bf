package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"modernc.org/sqlite"
)

// SQLite's primary result codes of a database that cannot be written for
// now: the disk (or the database's size limit) is full, an I/O error, a
// read-only file or folder, a file that cannot be opened.
const (
	sqliteReadOnly  = 8
	sqliteIOErr     = 10
	sqliteFull      = 13
	sqliteCantOpen  = 14
	primaryCodeMask = 0xff
)

// Unwritable reports whether err is the database refusing a write for a
// reason outside assay that may pass — a full disk, an I/O error, a
// read-only file — rather than a mistake in what was written.
func Unwritable(err error) bool {
	if pgUnwritable(err) {
		return true
	}
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & primaryCodeMask {
	case sqliteReadOnly, sqliteIOErr, sqliteFull, sqliteCantOpen:
		return true
	}
	return false
}

// LimitPages caps the database file at n pages of the write connection, so
// that a write past it fails as on a full disk; 0 lifts the cap. For tests
// of what a full disk does.
func (db *DB) LimitPages(ctx context.Context, n int) error {
	if n <= 0 {
		n = 1<<32 - 2
	}
	if _, err := db.write.ExecContext(ctx, fmt.Sprintf("PRAGMA max_page_count = %d", n)); err != nil {
		return fmt.Errorf("limit pages: %w", err)
	}
	return nil
}

// PageCount is the number of pages the database file holds.
func (db *DB) PageCount(ctx context.Context) (int, error) {
	var n int
	if err := db.write.QueryRowContext(ctx, `PRAGMA page_count`).Scan(&n); err != nil {
		return 0, fmt.Errorf("page count: %w", err)
	}
	return n, nil
}

// FullBelow is the room left on the database's disk under which a write
// may fail for want of it: a page of every kind a result touches.
const FullBelow = 1 << 20

// DiskFree is the room left for the database at path on its disk, in
// bytes: the blocks free to anyone, or to its owner when that is root.
func DiskFree(path string) (uint64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(filepath.Dir(path), &st); err != nil {
		return 0, fmt.Errorf("free space of %s: %w", filepath.Dir(path), err)
	}
	free := st.Bavail
	if os.Geteuid() == 0 {
		free = st.Bfree
	}
	return free * uint64(st.Bsize), nil
}
