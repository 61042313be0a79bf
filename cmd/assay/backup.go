package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"assay/store"
	"assay/tally"
)

func cmdBackup(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("backup", stderr)
	dbPath := dbFlag(fs)
	to := fs.String("to", "", "the copy to write (required); a running server may keep writing meanwhile")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *to == "" {
		return &exitError{code: 2, err: fmt.Errorf("backup: --to FILE is required")}
	}
	if store.IsPostgres(*dbPath) {
		return &exitError{code: 2, err: fmt.Errorf("backup: %s is a Postgres database: back it up with Postgres's own tools (pg_dump, or the server's continuous archiving)", store.Redacted(*dbPath))}
	}
	if err := dbExists(*dbPath); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	db, err := tally.Open(ctx, *dbPath)
	if err != nil {
		return err
	}
	defer db.Close()
	start := time.Now()
	if err := db.Backup(ctx, *to); err != nil {
		return err
	}
	st, _ := os.Stat(*to)
	fmt.Fprintf(stdout, "backed up %s to %s (%d bytes, %s)\n", *dbPath, *to, st.Size(), time.Since(start).Round(time.Millisecond))
	return nil
}

// backupSchedule backs the database up into dir every interval, keeping
// the newest keep copies, until ctx is done.
func backupSchedule(ctx context.Context, db *store.DB, dir string, every time.Duration, keep int, log *slog.Logger) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			path := filepath.Join(dir, store.BackupName(now.UTC().Format("20060102-150405.000")))
			if err := db.Backup(ctx, path); err != nil {
				log.Error("backup failed", "err", err)
				continue
			}
			removed, err := store.PruneBackups(dir, keep)
			if err != nil {
				log.Error("removing old backups", "err", err)
			}
			log.Info("backed up", "to", path, "removed", removed)
		}
	}
}
