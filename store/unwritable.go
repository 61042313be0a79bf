package store

import (
	"context"
	"errors"
	"fmt"

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
