package ingest

import (
	"context"
	"path/filepath"
	"strings"

	"assay/store"
)

// Import parses data and stores it as a dataset in one transaction. When the same
// bytes were imported before, it returns that dataset with created false.
// An empty name defaults to the file's base name without its extension.
// Each sample is stored as it is made: a file of 100,000 samples (44 MB)
// took 300 MB to hold whole as records and samples at once.
func Import(ctx context.Context, db *store.DB, data []byte, opts Options, name string) (*store.Dataset, bool, error) {
	p, err := read(data, opts)
	if err != nil {
		return nil, false, err
	}
	name = strings.TrimSpace(name)
	if name == "" {
		base := filepath.Base(opts.Filename)
		name = strings.TrimSuffix(base, filepath.Ext(base))
	}
	if name == "" || name == "." {
		name = "dataset " + p.SHA256[:8]
	}
	d := &store.Dataset{
		Name:        name,
		Kind:        p.Kind,
		SHA256:      p.SHA256,
		Format:      p.Format,
		Filename:    filepath.Base(opts.Filename),
		Size:        int64(len(data)),
		QuestionKey: p.QuestionKey,
		AnswerKey:   p.AnswerKey,
	}
	created, err := db.CreateDatasetFrom(ctx, d, p.count, p.samples)
	if err != nil {
		return nil, false, err
	}
	return d, created, nil
}
