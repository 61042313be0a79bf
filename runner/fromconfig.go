package runner

import (
	"context"
	"fmt"

	"assay/runner/config"
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
	data, err := ingest.ReadFile(cfg.Dataset.Path)
	if err != nil {
		return nil, fmt.Errorf("dataset.path: %w", err)
	}
	opts := ingest.Options{Filename: cfg.Dataset.Path, Kind: cfg.Dataset.Kind, QuestionKey: cfg.Dataset.QuestionKey,
		AnswerKey: cfg.Dataset.AnswerKey}
	ds, _, err := ingest.Import(ctx, m.db, data, opts, "")
	return ds, err
}
