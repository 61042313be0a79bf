package runner

import (
	"context"
	"errors"

	"assay"
	"assay/config"
	"assay/store"
)

// SavedRubric reads the rubric saved under name on the Rubrics page; nil
// when there is none.
func SavedRubric(ctx context.Context, db *store.DB, name string) (*config.Rubric, error) {
	r, err := db.Rubric(ctx, name)
	if errors.Is(err, assay.ErrNotFound) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	return config.ParseRubric(r.Name, r.Source, "rubric "+name)
}

// SavedRubrics is the option that lets a run file's {judge: NAME} name a
// rubric saved on the Rubrics page; the run keeps a copy in its config.
func (m *Manager) SavedRubrics(ctx context.Context) config.Option {
	return config.SavedRubrics(func(name string) (*config.Rubric, error) { return SavedRubric(ctx, m.db, name) })
}
