package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"iter"

	"assay"
)

// CreateDataset stores a dataset and all its samples in one transaction. When a
// dataset of the same bytes (SHA-256) read the same way (kind, question and
// answer keys) exists it is returned instead, with created false; the same
// bytes read another way are another dataset.
func (db *DB) CreateDataset(ctx context.Context, d *Dataset, samples []Sample) (created bool, err error) {
	return db.CreateDatasetFrom(ctx, d, len(samples), eachSample(samples))
}

// eachSample gives the samples one at a time.
func eachSample(samples []Sample) iter.Seq2[Sample, error] {
	return func(yield func(Sample, error) bool) {
		for _, s := range samples {
			if !yield(s, nil) {
				return
			}
		}
	}
}

// CreateDatasetFrom is CreateDataset with the samples given one at a time,
// n of them: they are stored as they come, so that a large file's samples
// are never all held at once. An error from samples is returned as it is,
// and nothing is stored.
func (db *DB) CreateDatasetFrom(ctx context.Context, d *Dataset, n int, samples iter.Seq2[Sample, error]) (created bool, err error) {
	if n == 0 {
		return false, assay.Errorf(assay.EINVALID, "the dataset has no samples")
	}
	tx, err := db.BeginWrite(ctx)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	existing, err := findDataset(ctx, tx, `d.sha256 = ? AND d.kind = ? AND d.question_key = ? AND d.answer_key = ?`,
		d.SHA256, d.Kind, d.QuestionKey, d.AnswerKey)
	if err == nil {
		*d = *existing
		return false, nil
	} else if !errors.Is(err, assay.ErrNotFound) {
		return false, err
	}
	d.Samples = n
	d.CreatedAt = parseTime(db.nowText())
	err = tx.QueryRowContext(ctx, `INSERT INTO datasets
		(name, kind, sha256, format, filename, size_bytes, question_key, answer_key, sample_count, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		RETURNING id`,
		d.Name, d.Kind, d.SHA256, d.Format, d.Filename, d.Size, d.QuestionKey, d.AnswerKey, d.Samples, db.nowText()).Scan(&d.ID)
	if err != nil {
		return false, fmt.Errorf("insert dataset: %w", err)
	}
	stored, err := insertSamples(ctx, tx, d.ID, samples)
	if err != nil {
		return false, err
	}
	if stored != n {
		return false, fmt.Errorf("insert samples: %d of %d", stored, n)
	}
	return true, tx.Commit()
}

// insertSamples stores the samples as they come and counts them; an error
// from samples is returned as it is.
func insertSamples(ctx context.Context, tx *sql.Tx, datasetID int64, samples iter.Seq2[Sample, error]) (int, error) {
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO samples
		(dataset_id, ordinal, sample_id, input, reference, choices, test, entry_point, metadata)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return 0, fmt.Errorf("insert samples: %w", err)
	}
	defer stmt.Close()
	n := 0
	for s, err := range samples {
		if err != nil {
			return n, err
		}
		choices, _ := json.Marshal(nonNil(s.Choices))
		meta, _ := json.Marshal(nonNilMap(s.Metadata))
		if _, err := stmt.ExecContext(ctx, datasetID, s.Ordinal, s.SampleID, s.Input, s.Reference,
			string(choices), s.Test, s.EntryPoint, string(meta)); err != nil {
			return n, fmt.Errorf("insert sample %q: %w", s.SampleID, err)
		}
		n++
	}
	return n, nil
}

const datasetColumns = `d.id, d.name, d.kind, d.sha256, d.format, d.filename, d.size_bytes,
	d.question_key, d.answer_key, d.sample_count, d.created_at, d.origin`

func scanDataset(row interface{ Scan(...any) error }) (*Dataset, error) {
	var d Dataset
	var created string
	err := row.Scan(&d.ID, &d.Name, &d.Kind, &d.SHA256, &d.Format, &d.Filename, &d.Size,
		&d.QuestionKey, &d.AnswerKey, &d.Samples, &created, &d.Origin)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("dataset: %w", assay.ErrNotFound)
	} else if err != nil {
		return nil, fmt.Errorf("scan dataset: %w", err)
	}
	d.CreatedAt = parseTime(created)
	return &d, nil
}

func findDataset(ctx context.Context, q Querier, where string, args ...any) (*Dataset, error) {
	return scanDataset(q.QueryRowContext(ctx, `SELECT `+datasetColumns+` FROM datasets d WHERE `+where, args...))
}

// Dataset returns the dataset with the given id.
func (db *DB) Dataset(ctx context.Context, id int64) (*Dataset, error) {
	return findDataset(ctx, db.read, `d.id = ?`, id)
}

// Datasets lists every dataset, newest first.
func (db *DB) Datasets(ctx context.Context) ([]Dataset, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+datasetColumns+` FROM datasets d ORDER BY d.id DESC`)
	if err != nil {
		return nil, fmt.Errorf("list datasets: %w", err)
	}
	defer rows.Close()
	var out []Dataset
	for rows.Next() {
		d, err := scanDataset(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *d)
	}
	return out, rows.Err()
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func nonNilMap(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}
