package runner

import (
	"context"
	"errors"
	"fmt"

	"assay"
	"assay/config"
	"assay/store"
	"assay/store/ingest"
)

// CreateFromConfig imports the config's dataset (or finds it by its bytes) and
// creates a pending run of its conditions, as `assay run` does.
func (m *Manager) CreateFromConfig(ctx context.Context, cfg *config.Config) (*store.Run, error) {
	ds, err := m.DatasetFromConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return m.Create(ctx, cfg, ds.ID, cfg.Conditions())
}

// DatasetFromConfig imports the config's dataset, or finds it by its bytes.
func (m *Manager) DatasetFromConfig(ctx context.Context, cfg *config.Config) (*store.Dataset, error) {
	opts := ingest.Options{Filename: cfg.Dataset.Path, Kind: cfg.Dataset.Kind, QuestionKey: cfg.Dataset.QuestionKey,
		AnswerKey: cfg.Dataset.AnswerKey}
	ds, _, err := ingest.ImportFile(ctx, m.db, cfg.Dataset.Path, opts, "")
	if err != nil {
		if se, ok := errors.AsType[*assay.Error](err); ok && se.Code == assay.EINVALID {
			return nil, err // it names the file and the line
		}
		return nil, fmt.Errorf("dataset.path: %w", err)
	}
	return ds, nil
}
