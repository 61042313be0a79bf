package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"

	"assay"
)

// deleteBatch is how many results a transaction of a run's deletion
// deletes, with what hangs from them.
var deleteBatch = 2000 // a variable for tests

// DeleteRun deletes a run that is not under way, with its results,
// judgements, scores, review verdicts, share links and lease. The run is
// marked deleting first, which hides it from every page and list; its
// results then go deleteBatch per transaction (about 0.2 s each), through
// the committer, and the run last. In one transaction, a run of 150,000
// results held the database's writes for 20 s: another process's writes
// (a CI run's) failed after 10. A run a stopped process left deleting is
// deleted when the database is next opened.
func (db *DB) DeleteRun(ctx context.Context, id int64) (results int, err error) {
	tx, err := db.BeginWrite(ctx)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	var status RunStatus
	if err := tx.QueryRowContext(ctx, `SELECT status FROM runs WHERE id = ?`, id).Scan(&status); errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("run %d: %w", id, assay.ErrNotFound)
	} else if err != nil {
		return 0, fmt.Errorf("delete run %d: %w", id, err)
	}
	if !status.Finished() {
		return 0, assay.Errorf(assay.ECONFLICT, "Run %d is %s: cancel it before deleting it.", id, status)
	}
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM results WHERE run_id = ?`, id).Scan(&results); err != nil {
		return 0, fmt.Errorf("delete run: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE runs SET status = ? WHERE id = ?`, RunDeleting, id); err != nil {
		return 0, fmt.Errorf("delete run: %w", err)
	}
	if db.tallies != nil {
		if err := db.tallies.Deleting(ctx, tx, results); err != nil {
			return 0, fmt.Errorf("delete run: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("delete run: %w", err)
	}
	if err := db.purgeRun(ctx, id); err != nil {
		return results, err
	}
	if db.tallies != nil {
		if err := db.tallies.Deleted(ctx, results); err != nil {
			slog.Warn(err.Error())
		}
	}
	return results, nil
}

// purgeRun deletes a run marked deleting: its results a batch at a time,
// then the run and the rest of what hangs from it.
func (db *DB) purgeRun(ctx context.Context, id int64) error {
	for {
		var n int64
		err := db.Commit(ctx, func(ctx context.Context, tx Tx) error {
			res, err := tx.ExecContext(ctx, `DELETE FROM results WHERE id IN (SELECT id FROM results WHERE run_id = ? LIMIT ?)`,
				id, deleteBatch)
			if err == nil {
				n, err = res.RowsAffected()
			}
			return err
		})
		if err != nil {
			return fmt.Errorf("delete run %d: %w", id, err)
		}
		if n == 0 {
			break
		}
	}
	err := db.Commit(ctx, func(ctx context.Context, tx Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM runs WHERE id = ? AND status = ?`, id, RunDeleting)
		return err
	})
	if err != nil {
		return fmt.Errorf("delete run %d: %w", id, err)
	}
	return nil
}

// resumeDeleting deletes, in the background, the runs a process left
// deleting when it stopped.
func (db *DB) resumeDeleting(ctx context.Context) error {
	// A run a stopped process was importing is deleted as well; one a
	// live process imports is left to it.
	importing, err := db.runIDs(ctx, "runs being imported", `SELECT id FROM runs WHERE status = ?`, RunImporting)
	if err != nil {
		return err
	}
	for _, id := range importing {
		l, err := findLease(ctx, db.read, id)
		if err != nil && !errors.Is(err, assay.ErrNotFound) {
			return err
		}
		if l != nil && db.now().Before(l.ExpiresAt) && HolderAlive(l.Holder) {
			continue
		}
		if _, err := db.write.ExecContext(ctx, `UPDATE runs SET status = ? WHERE id = ? AND status = ?`, RunDeleting, id, RunImporting); err != nil {
			return fmt.Errorf("runs being imported: %w", err)
		}
	}
	ids, err := db.runIDs(ctx, "runs being deleted", `SELECT id FROM runs WHERE status = ? ORDER BY id`, RunDeleting)
	if err != nil || len(ids) == 0 {
		return err
	}
	db.bg.Go(func(ctx context.Context) {
		if err := db.purgeRuns(ctx, ids); err != nil && ctx.Err() == nil {
			slog.Warn("deleting runs: " + err.Error()) // the next start goes on
		}
	})
	return nil
}

// purgeRuns deletes the runs marked deleting, one after the other.
func (db *DB) purgeRuns(ctx context.Context, ids []int64) error {
	for _, id := range ids {
		if err := db.purgeRun(ctx, id); err != nil {
			return err
		}
	}
	return nil
}

// samplesPerDelete is how many samples a statement of a dataset's deletion deletes.
var samplesPerDelete = 5000 // a variable for tests

// DeleteDataset deletes a dataset and its samples in one transaction. A
// dataset that runs use is refused unless withRuns, which deletes those runs
// (none may be under way) with it.
func (db *DB) DeleteDataset(ctx context.Context, id int64, withRuns bool) (runs int, err error) {
	tx, err := db.BeginWrite(ctx)
	if err != nil {
		return 0, err
	}
	defer func() { tx.Rollback() }()
	if runs, err = datasetRuns(ctx, tx, id, withRuns); err != nil {
		return runs, err
	}
	if runs > 0 {
		// The runs go first, as DeleteRun deletes them, a batch at a time.
		if err := db.purgeDatasetRuns(ctx, tx, id); err != nil {
			return 0, err
		}
		if tx, err = db.BeginWrite(ctx); err != nil {
			return 0, err
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM runs WHERE dataset_id = ?`, id); err != nil {
		return 0, fmt.Errorf("delete dataset's runs: %w", err)
	}
	if err := deleteSamples(ctx, tx, id); err != nil {
		return 0, err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM datasets WHERE id = ?`, id); err != nil {
		return 0, fmt.Errorf("delete dataset: %w", err)
	}
	return runs, tx.Commit()
}

// datasetRuns counts the dataset's runs, refusing when there are some and
// they are not to go with it, or when some are under way.
func datasetRuns(ctx context.Context, tx *sql.Tx, id int64, withRuns bool) (int, error) {
	d, err := findDataset(ctx, tx, `d.id = ?`, id)
	if err != nil {
		return 0, err
	}
	var runs, unfinished int
	if err := tx.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(status IN (?, ?)), 0) FROM runs WHERE dataset_id = ?`,
		RunPending, RunRunning, id).Scan(&runs, &unfinished); err != nil {
		return 0, fmt.Errorf("delete dataset: %w", err)
	}
	switch {
	case runs > 0 && !withRuns:
		return runs, assay.Errorf(assay.ECONFLICT, "%d runs use dataset %q: delete them with it, or delete them first.", runs, d.Name)
	case unfinished > 0:
		return runs, assay.Errorf(assay.ECONFLICT, "%d runs of dataset %q are under way: cancel them first.", unfinished, d.Name)
	}
	return runs, nil
}

// purgeDatasetRuns marks the dataset's runs as being deleted, ending the
// transaction, and purges them.
func (db *DB) purgeDatasetRuns(ctx context.Context, tx *sql.Tx, id int64) error {
	if _, err := tx.ExecContext(ctx, `UPDATE runs SET status = ? WHERE dataset_id = ?`, RunDeleting, id); err != nil {
		return fmt.Errorf("delete dataset's runs: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("delete dataset's runs: %w", err)
	}
	ids, err := db.runIDs(ctx, "dataset's runs", `SELECT id FROM runs WHERE dataset_id = ? AND status = ?`, id, RunDeleting)
	if err != nil {
		return err
	}
	return db.purgeRuns(ctx, ids)
}

// deleteSamples deletes the dataset's samples samplesPerDelete per
// statement: a statement in a transaction keeps the pages it changes in
// memory until it ends, in case it has to be undone alone (100,000
// samples: 100 MB).
func deleteSamples(ctx context.Context, tx *sql.Tx, id int64) error {
	for {
		res, err := tx.ExecContext(ctx, `DELETE FROM samples WHERE id IN
			(SELECT id FROM samples WHERE dataset_id = ? ORDER BY ordinal LIMIT ?)`, id, samplesPerDelete)
		if err != nil {
			return fmt.Errorf("delete dataset's samples: %w", err)
		}
		if n, _ := res.RowsAffected(); n < int64(samplesPerDelete) {
			return nil
		}
	}
}
