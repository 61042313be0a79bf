package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"assay"
)

// SavedRubric is a rubric kept on the Rubrics page: its name and its source,
// the YAML a run file writes under rubrics.NAME. The store keeps the text;
// config reads and checks it.
type SavedRubric struct {
	ID        int64
	Name      string
	Source    string
	CreatedAt time.Time
	UpdatedAt time.Time
	UpdatedBy string
}

// maxRubricSource bounds a saved rubric's text.
const maxRubricSource = 64 << 10

// SaveRubric stores a rubric under its name, replacing the one of that name
// if there is one. The caller has checked the source.
func (db *DB) SaveRubric(ctx context.Context, name, source string) (*SavedRubric, error) {
	if len(source) > maxRubricSource {
		return nil, assay.Errorf(assay.EINVALID, "Rubric: at most %d KiB.", maxRubricSource>>10)
	}
	now := db.nowText()
	_, err := db.write.ExecContext(ctx, `INSERT INTO rubrics (name, source, created_at, updated_at, updated_by) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET source = excluded.source, updated_at = excluded.updated_at, updated_by = excluded.updated_by`,
		name, source, now, now, Actor(ctx))
	if err != nil {
		return nil, fmt.Errorf("save rubric: %w", err)
	}
	return db.Rubric(ctx, name)
}

// Rubric returns the saved rubric of that name, or ErrNotFound.
func (db *DB) Rubric(ctx context.Context, name string) (*SavedRubric, error) {
	r, err := scanRubric(db.read.QueryRowContext(ctx, `SELECT id, name, source, created_at, updated_at, updated_by FROM rubrics WHERE name = ?`, name))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("rubric %q: %w", name, assay.ErrNotFound)
	} else if err != nil {
		return nil, fmt.Errorf("rubric %q: %w", name, err)
	}
	return r, nil
}

// Rubrics lists the saved rubrics by name.
func (db *DB) Rubrics(ctx context.Context) ([]SavedRubric, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT id, name, source, created_at, updated_at, updated_by FROM rubrics ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("rubrics: %w", err)
	}
	defer rows.Close()
	var out []SavedRubric
	for rows.Next() {
		r, err := scanRubric(rows)
		if err != nil {
			return nil, fmt.Errorf("rubrics: %w", err)
		}
		out = append(out, *r)
	}
	return out, rows.Err()
}

// DeleteRubric forgets a saved rubric; runs that used it keep their copy.
func (db *DB) DeleteRubric(ctx context.Context, name string) error {
	res, err := db.write.ExecContext(ctx, `DELETE FROM rubrics WHERE name = ?`, name)
	if err != nil {
		return fmt.Errorf("delete rubric: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("rubric %q: %w", name, assay.ErrNotFound)
	}
	return nil
}

func scanRubric(row interface{ Scan(...any) error }) (*SavedRubric, error) {
	var r SavedRubric
	var created, updated string
	if err := row.Scan(&r.ID, &r.Name, &r.Source, &created, &updated, &r.UpdatedBy); err != nil {
		return nil, err
	}
	r.CreatedAt, r.UpdatedAt = parseTime(created), parseTime(updated)
	return &r, nil
}
