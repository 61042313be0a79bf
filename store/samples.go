package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"math"
	"strings"

	"assay"
)

const sampleColumns = `s.id, s.dataset_id, s.ordinal, s.sample_id, s.input, s.reference,
	s.choices, s.test, s.entry_point, s.metadata`

func scanSample(row interface{ Scan(...any) error }) (*Sample, error) {
	var s Sample
	var choices, meta string
	err := row.Scan(&s.ID, &s.DatasetID, &s.Ordinal, &s.SampleID, &s.Input, &s.Reference,
		&choices, &s.Test, &s.EntryPoint, &meta)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("sample: %w", assay.ErrNotFound)
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
		limit = math.MaxInt64
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

// SampleRef is a sample without its texts: its row and its place in the
// file.
type SampleRef struct {
	ID      int64
	Ordinal int
}

// SampleRefs lists a dataset's samples in file order, without their
// texts: what a run of a large dataset holds of every sample. Both are
// in the index of the dataset's ordinals, which answers alone: with the
// sample's own id too, each row was read from the table, twice the time
// before a run's first call.
func (db *DB) SampleRefs(ctx context.Context, datasetID int64) ([]SampleRef, error) {
	var out []SampleRef
	err := EachRow(ctx, db.read, `SELECT id, ordinal FROM samples WHERE dataset_id = ? ORDER BY ordinal`,
		[]any{datasetID}, func(rows *sql.Rows) error {
			var r SampleRef
			err := rows.Scan(&r.ID, &r.Ordinal)
			out = append(out, r)
			return err
		})
	if err != nil {
		return nil, fmt.Errorf("list samples: %w", err)
	}
	return out, nil
}

// SamplesBetween returns a dataset's samples whose ordinals are from to
// to, in file order.
func (db *DB) SamplesBetween(ctx context.Context, datasetID int64, from, to int) ([]Sample, error) {
	var out []Sample
	err := db.EachSampleBetween(ctx, datasetID, from, to, func(s *Sample) error {
		out = append(out, *s)
		return nil
	})
	return out, err
}

// EachSampleBetween calls f with each of a dataset's samples whose
// ordinals are from to to, in file order, one at a time: an estimate of a
// run over 100,000 questions held them all at once.
func (db *DB) EachSampleBetween(ctx context.Context, datasetID int64, from, to int, f func(*Sample) error) error {
	err := EachRow(ctx, db.read, `SELECT `+sampleColumns+` FROM samples s
		WHERE s.dataset_id = ? AND s.ordinal BETWEEN ? AND ? ORDER BY s.ordinal`, []any{datasetID, from, to},
		func(rows *sql.Rows) error {
			s, err := scanSample(rows)
			if err != nil {
				return err
			}
			return f(s)
		})
	if err != nil {
		return fmt.Errorf("list samples: %w", err)
	}
	return nil
}

// SamplesAt returns a dataset's samples at the given ordinals, in ordinal
// order: a run that takes its samples in a random order reads them so, a
// batch at a time.
func (db *DB) SamplesAt(ctx context.Context, datasetID int64, ordinals []int) ([]Sample, error) {
	list, err := json.Marshal(ordinals)
	if err != nil {
		return nil, err
	}
	var out []Sample
	err = EachRow(ctx, db.read, `SELECT `+sampleColumns+` FROM samples s
		WHERE s.dataset_id = ? AND s.ordinal IN (SELECT value FROM json_each(?)) ORDER BY s.ordinal`, []any{datasetID, string(list)},
		func(rows *sql.Rows) error {
			s, err := scanSample(rows)
			if err != nil {
				return err
			}
			out = append(out, *s)
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("list samples: %w", err)
	}
	return out, nil
}

// SamplesFromRow returns up to n samples of a dataset whose row ids are
// row or more, in row order: a walk over samples in that order reads them
// a window at a time.
func (db *DB) SamplesFromRow(ctx context.Context, datasetID, row int64, n int) ([]Sample, error) {
	var out []Sample
	err := EachRow(ctx, db.read, `SELECT `+sampleColumns+` FROM samples s WHERE s.id >= ? AND +s.dataset_id = ? ORDER BY s.id LIMIT ?`,
		[]any{row, datasetID, n}, func(rows *sql.Rows) error {
			s, err := scanSample(rows)
			if err == nil {
				out = append(out, *s)
			}
			return err
		})
	if err != nil {
		return nil, fmt.Errorf("list samples: %w", err)
	}
	return out, nil
}

// AllSamples is every sample of a dataset in file order, read one at a
// time; what stopped the reading is left in *err.
func (db *DB) AllSamples(ctx context.Context, datasetID int64, err *error) iter.Seq[*Sample] {
	return func(yield func(*Sample) bool) {
		stop := errors.New("stop")
		*err = db.EachSampleBetween(ctx, datasetID, math.MinInt, math.MaxInt, func(s *Sample) error {
			if !yield(s) {
				return stop
			}
			return nil
		})
		if errors.Is(*err, stop) {
			*err = nil
		}
	}
}

// Sample returns one sample by its row id.
func (db *DB) Sample(ctx context.Context, id int64) (*Sample, error) {
	return scanSample(db.read.QueryRowContext(ctx, `SELECT `+sampleColumns+` FROM samples s WHERE s.id = ?`, id))
}

// SampleHead is the beginning of a sample's texts, for tables.
type SampleHead struct {
	Input     string
	Reference string
}

// SampleHeads returns the first n characters (n+1 when there are more) of the
// input and reference of the samples with the given row ids.
func (db *DB) SampleHeads(ctx context.Context, ids []int64, n int) (map[int64]SampleHead, error) {
	out := make(map[int64]SampleHead, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	args := []any{n + 1}
	for _, id := range ids {
		args = append(args, id)
	}
	rows, err := db.read.QueryContext(ctx, `SELECT id, substr(input, 1, ?1), substr(reference, 1, ?1) FROM samples
		WHERE id IN (`+strings.Repeat("?, ", len(ids)-1)+`?)`, args...)
	if err != nil {
		return nil, fmt.Errorf("sample heads: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var h SampleHead
		if err := rows.Scan(&id, &h.Input, &h.Reference); err != nil {
			return nil, fmt.Errorf("sample heads: %w", err)
		}
		out[id] = h
	}
	return out, rows.Err()
}

// SampleNeighbours returns the row ids of the samples before and after the
// one at ordinal in a dataset's order; 0 where there is none.
func (db *DB) SampleNeighbours(ctx context.Context, datasetID int64, ordinal int) (prev, next int64, err error) {
	err = db.read.QueryRowContext(ctx, `SELECT
		coalesce((SELECT id FROM samples WHERE dataset_id = ?1 AND ordinal < ?2 ORDER BY ordinal DESC LIMIT 1), 0),
		coalesce((SELECT id FROM samples WHERE dataset_id = ?1 AND ordinal > ?2 ORDER BY ordinal LIMIT 1), 0)`,
		datasetID, ordinal).Scan(&prev, &next)
	if err != nil {
		return 0, 0, fmt.Errorf("sample neighbours: %w", err)
	}
	return prev, next, nil
}
