package eee

import (
	"context"

	"assay/store"
)

// Imported is what importing a run made: what assay import --json prints.
type Imported struct {
	RunID          int64    `json:"run_id"`
	Name           string   `json:"name"`
	Results        int      `json:"results"`
	Conditions     []string `json:"conditions"`
	Samples        int      `json:"samples"`
	DatasetID      int64    `json:"dataset_id"`
	Dataset        string   `json:"dataset"`
	DatasetSHA256  string   `json:"dataset_sha256"`
	DatasetCreated bool     `json:"dataset_created"` // false: the run joined a dataset already there
}

// Import reads the files and stores the run: all of it, or nothing.
func Import(ctx context.Context, db *store.DB, f Files) (*Imported, error) {
	imp, err := Read(f)
	if err != nil {
		return nil, store.Errorf(store.EINVALID, "%s", err)
	}
	created, err := db.ImportRun(ctx, imp)
	if err != nil {
		return nil, err
	}
	out := &Imported{RunID: imp.Run.ID, Name: imp.Run.Name, Results: imp.Results, Samples: len(imp.Samples),
		DatasetID: imp.Dataset.ID, Dataset: imp.Dataset.Name, DatasetSHA256: imp.Dataset.SHA256,
		DatasetCreated: created}
	for _, c := range imp.Run.Conditions {
		out.Conditions = append(out.Conditions, c.Name)
	}
	return out, nil
}
