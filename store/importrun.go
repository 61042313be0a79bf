package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"assay"
)

// RunImport is a finished run brought in from another tool's result files:
// the dataset it ran on (found by its SHA-256, or created from Samples), the
// run, and its results, each naming its sample by ordinal.
type RunImport struct {
	Dataset  Dataset
	Samples  []Sample // the samples the files hold, by ordinal
	Run      Run
	Results  int       // how many EachResult gives
	Finished time.Time // when the run finished; zero for now
	// Key names the files: a run imported from them before is found by
	// it (ImportedRun). Empty for none.
	Key string
	// Extra is what the files hold that the import does not read, kept
	// with the run as given (RunImportExtra); nil for nothing.
	Extra       json.RawMessage
	ExtraFields int // how many fields Extra holds
	// EachResult gives fn each result, with the ordinal of its sample, as
	// it reads them: a large run's are never held at once.
	EachResult func(fn func(r *Result, ordinal int) error) error
}

// importLease is how long an import's lease lasts: an import is left to
// its process until then, unless that process is gone.
const importLease = 24 * time.Hour

// importBatch is how many results a transaction of an import stores.
var importBatch = 2000 // a variable for tests

// ImportRun stores an imported run: all of it or nothing. A dataset with
// the same SHA-256 is reused when every imported sample matches its sample
// at the same ordinal; a new one is marked OriginEEE. The run is stored
// completed and marked OriginEEE. created says whether the dataset was made
// for the run.
//
// The dataset and the run come first, the run hidden (importing) until its
// last result is stored; the results go importBatch per transaction. In
// one transaction, a run of 150,000 results held the database's writes for
// half a minute, and other processes' writes failed after 10 s. A run that
// fails meanwhile is deleted, with a dataset made for it; one a stopped
// process left importing is deleted when the database is next opened.
func (db *DB) ImportRun(ctx context.Context, imp *RunImport) (created bool, err error) {
	if len(imp.Samples) == 0 {
		return false, assay.Errorf(assay.EINVALID, "the files hold no samples")
	}
	tx, err := db.BeginWrite(ctx)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	rows, created, err := importDataset(ctx, tx, db.nowText(), imp)
	if err != nil {
		return false, err
	}
	now := db.nowText()
	finished := now
	if !imp.Finished.IsZero() {
		finished = imp.Finished.UTC().Format(timeFormat)
	}
	r := &imp.Run
	r.DatasetID = imp.Dataset.ID
	if err := createRun(ctx, tx, now, r); err != nil {
		return false, err
	}
	r.Origin = OriginEEE
	if _, err := tx.ExecContext(ctx, `UPDATE runs SET status = ?, origin = ?, started_at = ?, finished_at = ?, import_key = ? WHERE id = ?`,
		RunImporting, r.Origin, finished, finished, imp.Key, r.ID); err != nil {
		return false, fmt.Errorf("import run: %w", err)
	}
	if len(imp.Extra) > 0 {
		if _, err := tx.ExecContext(ctx, `INSERT INTO run_import_extra (run_id, fields) VALUES (?, ?)`, r.ID, string(imp.Extra)); err != nil {
			return false, fmt.Errorf("import run: %w", err)
		}
	}
	// The lease says which process imports the run: another that opens the
	// database meanwhile leaves it alone unless that process is gone.
	holder := ThisProcess("assay import")
	leaseNow, err := db.sharedNow(ctx, tx)
	if err != nil {
		return false, err
	}
	if err := acquireLease(ctx, tx, r.ID, holder, leaseNow, importLease, nil); err != nil {
		return false, err
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("import run: %w", err)
	}
	if err := db.importResults(ctx, imp, rows, now); err != nil {
		db.abandonImport(context.WithoutCancel(ctx), r.ID, created, imp.Dataset.ID)
		return false, err
	}
	// Completed, keeping when the run finished (as the files say).
	if _, err := db.write.ExecContext(ctx, `UPDATE runs SET status = ? WHERE id = ? AND status = ?`, RunCompleted, r.ID, RunImporting); err != nil {
		db.abandonImport(context.WithoutCancel(ctx), r.ID, created, imp.Dataset.ID)
		return false, fmt.Errorf("import run: %w", err)
	}
	r.Status = RunCompleted
	if err := db.ReleaseLease(ctx, r.ID, holder); err != nil {
		return created, err
	}
	return created, nil
}

// ImportedRun is the completed run imported from the files of key, or nil
// when there is none (or it was deleted).
func (db *DB) ImportedRun(ctx context.Context, key string) (*Run, error) {
	if key == "" {
		return nil, nil
	}
	var id int64
	err := db.read.QueryRowContext(ctx, `SELECT id FROM runs WHERE import_key = ? AND status = ? ORDER BY id LIMIT 1`, key, RunCompleted).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("imported run: %w", err)
	}
	return db.Run(ctx, id)
}

// importResults stores an imported run's results, importBatch per transaction.
func (db *DB) importResults(ctx context.Context, imp *RunImport, rows map[int]int64, now string) error {
	var w *Tx
	defer func() {
		if w != nil {
			w.Rollback()
		}
	}()
	n := 0
	err := imp.EachResult(func(res *Result, ordinal int) error {
		row, ok := rows[ordinal]
		if !ok {
			return fmt.Errorf("import run: no sample at ordinal %d", ordinal)
		}
		if w == nil {
			tx, err := db.BeginWrite(ctx)
			if err != nil {
				return err
			}
			bw := db.writer(tx)
			w = &bw
		}
		res.RunID, res.SampleRow = imp.Run.ID, row
		n++
		if err := insertResult(ctx, *w, now, res); err != nil {
			return err
		}
		if n%importBatch == 0 {
			err := w.commit(ctx)
			w = nil
			return err
		}
		return nil
	})
	if err != nil {
		return err
	}
	if n != imp.Results {
		return fmt.Errorf("import run: %d results read, %d counted before: the files changed meanwhile", n, imp.Results)
	}
	if w != nil {
		err := w.commit(ctx)
		w = nil
		return err
	}
	return nil
}

// abandonImport deletes a run whose import failed, and the dataset made
// for it unless another run uses it by now.
func (db *DB) abandonImport(ctx context.Context, runID int64, created bool, datasetID int64) {
	if _, err := db.DeleteRun(ctx, runID); err != nil {
		slog.Warn("import run: deleting what was stored: " + err.Error()) // the next open finishes it
		return
	}
	if created {
		if _, err := db.DeleteDataset(ctx, datasetID, false); err != nil && assay.ErrorCode(err) != assay.ECONFLICT {
			slog.Warn("import run: deleting its dataset: " + err.Error())
		}
	}
}

// importDataset finds or creates the imported run's dataset and returns its
// samples' row ids by ordinal.
func importDataset(ctx context.Context, tx *sql.Tx, now string, imp *RunImport) (rows map[int]int64, created bool, err error) {
	existing, err := findDataset(ctx, tx, `d.sha256 = ? ORDER BY d.id LIMIT 1`, imp.Dataset.SHA256)
	created = errors.Is(err, assay.ErrNotFound)
	switch {
	case errors.Is(err, assay.ErrNotFound):
		d := &imp.Dataset
		d.Origin, d.Samples, d.CreatedAt = OriginEEE, len(imp.Samples), parseTime(now)
		err := tx.QueryRowContext(ctx, `INSERT INTO datasets
			(name, kind, sha256, format, filename, size_bytes, question_key, answer_key, sample_count, created_at, origin)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			RETURNING id`,
			d.Name, d.Kind, d.SHA256, d.Format, d.Filename, d.Size, d.QuestionKey, d.AnswerKey, d.Samples, now, d.Origin).Scan(&d.ID)
		if err != nil {
			return nil, false, fmt.Errorf("insert dataset: %w", err)
		}
		if _, err := insertSamples(ctx, tx, d.ID, eachSample(imp.Samples)); err != nil {
			return nil, false, err
		}
	case err != nil:
		return nil, false, err
	default:
		imp.Dataset = *existing
	}
	q, err := tx.QueryContext(ctx, `SELECT id, ordinal, input FROM samples WHERE dataset_id = ?`, imp.Dataset.ID)
	if err != nil {
		return nil, false, fmt.Errorf("import samples: %w", err)
	}
	defer q.Close()
	type stored struct {
		id    int64
		input string
	}
	have := map[int]stored{}
	for q.Next() {
		var s stored
		var ord int
		if err := q.Scan(&s.id, &ord, &s.input); err != nil {
			return nil, false, fmt.Errorf("import samples: %w", err)
		}
		have[ord] = s
	}
	if err := q.Err(); err != nil {
		return nil, false, fmt.Errorf("import samples: %w", err)
	}
	rows = make(map[int]int64, len(imp.Samples))
	for _, s := range imp.Samples {
		h, ok := have[s.Ordinal]
		switch {
		case !ok:
			return nil, false, assay.Errorf(assay.EINVALID, "dataset %q (SHA-256 %.12s…) has no sample_idx %d, which the files hold: they were not made from that file",
				imp.Dataset.Name, imp.Dataset.SHA256, s.Ordinal-1)
		case h.input != s.Input:
			return nil, false, assay.Errorf(assay.EINVALID, "sample_idx %d's question differs from dataset %q's (SHA-256 %.12s…): the files were not made from that file",
				s.Ordinal-1, imp.Dataset.Name, imp.Dataset.SHA256)
		}
		rows[s.Ordinal] = h.id
	}
	return rows, created, nil
}

// RunImportExtra is what the files a run was imported from hold that the
// import did not read, as JSON; nil for nothing (or a run not imported).
func (db *DB) RunImportExtra(ctx context.Context, runID int64) (json.RawMessage, error) {
	var s string
	err := db.read.QueryRowContext(ctx, `SELECT fields FROM run_import_extra WHERE run_id = ?`, runID).Scan(&s)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("run %d: import extra: %w", runID, err)
	}
	return json.RawMessage(s), nil
}
