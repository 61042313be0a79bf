package store

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"assay/internal/outfile"
)

// Backup writes a consistent copy of the database to path while others go
// on reading and writing it: SQLite's VACUUM INTO reads one snapshot. The
// copy is written beside path and renamed into place, so that path is
// either the old file or a whole new one, and checked before the rename;
// a path that is a device or FIFO is written through (see outfile), and one
// that is the database itself is refused. The
// copy has the page size of a new database, whatever the original's: a
// database made with SQLite's default pages gets larger ones once restored.
func (db *DB) Backup(ctx context.Context, path string) error {
	t, err := outfile.Resolve(path)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if err := db.notItself(t.Path); err != nil {
		return err
	}
	// The copy is made beside its place, or beside the database when it is
	// to be written through (to /dev/null, a pipe).
	dir := filepath.Dir(t.Path)
	if t.Through {
		dir = filepath.Dir(db.Path)
	}
	tmpName, err := outfile.TempName(dir, "backup") // VACUUM INTO wants to create the file itself
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	defer os.Remove(tmpName)
	// A connection of its own: the read pool may not write the copy, and
	// the write connection must stay free for the runs.
	conn, err := sql.Open("sqlite", dsnFor(db.Path, "deferred"))
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	defer conn.Close()
	// One connection for both statements: the page size is the copy's.
	c, err := conn.Conn(ctx)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	defer c.Close()
	if _, err := c.ExecContext(ctx, fmt.Sprintf(`PRAGMA page_size = %d`, PageSize)); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if _, err := c.ExecContext(ctx, `VACUUM INTO ?`, tmpName); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	c.Close()
	conn.Close()
	if err := checkBackup(ctx, tmpName); err != nil {
		return err
	}
	if err := outfile.Place(tmpName, t); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	return nil
}

// notItself refuses a backup written over the database or one of the
// files SQLite keeps beside it (its write-ahead log, its shared memory),
// whatever the name or link it is reached by: the copy would be written
// into the database while it is read, and break it.
func (db *DB) notItself(target string) error {
	st, err := os.Stat(target)
	if err != nil {
		return nil // a new file is no database's
	}
	for _, own := range []string{db.Path, db.Path + "-wal", db.Path + "-shm", db.Path + "-journal"} {
		if ost, err := os.Stat(own); err == nil && os.SameFile(st, ost) {
			return fmt.Errorf("backup: %s is %s, a file of the database being backed up: name another file", target, own)
		}
	}
	return nil
}

// checkBackup opens a copy, drops the run leases it took along (no process
// executes the copy's runs: whoever opens it resumes them) and checks its
// integrity.
func checkBackup(ctx context.Context, path string) error {
	b, err := Open(ctx, path)
	if err != nil {
		return fmt.Errorf("backup: the copy does not open: %w", err)
	}
	defer b.Close()
	if _, err := b.write.ExecContext(ctx, `DELETE FROM run_leases`); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	var result string
	if err := b.read.QueryRowContext(ctx, `PRAGMA quick_check`).Scan(&result); err != nil {
		return fmt.Errorf("backup: check the copy: %w", err)
	}
	if result != "ok" {
		return fmt.Errorf("backup: the copy is damaged: %s", result)
	}
	return nil
}

// BackupName is the file name of a scheduled backup taken at the time given
// as YYYYMMDD-HHMMSS.mmm: names sort by age.
func BackupName(stamp string) string { return "assay-" + stamp + ".db" }

// PruneBackups deletes the oldest scheduled backups in dir beyond keep.
func PruneBackups(dir string, keep int) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if n := e.Name(); !e.IsDir() && strings.HasPrefix(n, "assay-") && strings.HasSuffix(n, ".db") {
			names = append(names, n)
		}
	}
	var removed []string
	for len(names) > keep {
		if err := os.Remove(filepath.Join(dir, names[0])); err != nil {
			return removed, err
		}
		removed = append(removed, names[0])
		names = names[1:]
	}
	return removed, nil
}
