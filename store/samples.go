package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
)

const sampleColumns = `s.id, s.dataset_id, s.ordinal, s.sample_id, s.input, s.reference,
	s.choices, s.test, s.entry_point, s.metadata`

func scanSample(row interface{ Scan(...any) error }) (*Sample, error) {
	var s Sample
	var choices, meta string
	err := row.Scan(&s.ID, &s.DatasetID, &s.Ordinal, &s.SampleID, &s.Input, &s.Reference,
		&choices, &s.Test, &s.EntryPoint, &meta)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("sample: %w", ErrNotFound)
	} else if err != nil {
		return nil, fmt.Errorf("scan sample: %w", err)
	}
	if err := json.Unmarshal([]byte(choices), &s.Choices); err != nil {
		return nil, fmt.Errorf("sample %d choices: %w", s.ID, err)
	}
	if err := json.Unmarshal([]byte(meta), &s.Metadata); err != nil {
		return nil, fmt.Errorf("sample %d metadata: %w", s.ID, err)
	}
	return &s, nil
}

// Samples returns up to limit samples of a dataset in file order, starting after offset.
// A limit of 0 or less returns them all.
func (db *DB) Samples(ctx context.Context, datasetID int64, offset, limit int) ([]Sample, error) {
	if limit <= 0 {
		limit = -1
	}
	rows, err := db.read.QueryContext(ctx, `SELECT `+sampleColumns+` FROM samples s
		WHERE s.dataset_id = ? ORDER BY s.ordinal LIMIT ? OFFSET ?`, datasetID, limit, offset)
	if err != nil {
		return nil, fmt.Errorf("list samples: %w", err)
	}
	defer rows.Close()
	var out []Sample
	for rows.Next() {
		s, err := scanSample(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *s)
	}
	return out, rows.Err()
}

// Sample returns one sample by its row id.
func (db *DB) Sample(ctx context.Context, id int64) (*Sample, error) {
	return scanSample(db.read.QueryRowContext(ctx, `SELECT `+sampleColumns+` FROM samples s WHERE s.id = ?`, id))
}
