package eee

import (
	"context"
	"crypto/sha256"
	"fmt"

	"assay"
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
	// Existing: the files were imported before, and that run is the one
	// given; nothing was stored.
	Existing bool `json:"existing"`
	// UnreadFields is how many fields the files hold that the import does
	// not read: kept with the run, given back in its JSON export.
	UnreadFields int `json:"unread_fields"`
}

// filesKey names the files: their aggregate's SHA-256 (which names the run,
// its time and figures) and the instance file's size.
func filesKey(f Files) string {
	return fmt.Sprintf("%x-%d", sha256.Sum256(f.Results), f.Instances.Size)
}

// Import reads the files and stores the run: all of it, or nothing.
// Files imported before lead to the run they made.
func Import(ctx context.Context, db *store.DB, f Files) (*Imported, error) {
	if run, err := db.ImportedRun(ctx, filesKey(f)); err != nil {
		return nil, err
	} else if run != nil {
		return existing(ctx, db, run)
	}
	imp, err := Read(f)
	if err != nil {
		return nil, assay.Errorf(assay.EINVALID, "%s", err)
	}
	imp.Key = filesKey(f)
	created, err := db.ImportRun(ctx, imp)
	if err != nil {
		return nil, err
	}
	out := &Imported{RunID: imp.Run.ID, Name: imp.Run.Name, Results: imp.Results, Samples: len(imp.Samples),
		DatasetID: imp.Dataset.ID, Dataset: imp.Dataset.Name, DatasetSHA256: imp.Dataset.SHA256,
		DatasetCreated: created, UnreadFields: imp.ExtraFields}
	for _, c := range imp.Run.Conditions {
		out.Conditions = append(out.Conditions, c.Name)
	}
	return out, nil
}

// existing is what importing files made before: run.
func existing(ctx context.Context, db *store.DB, run *store.Run) (*Imported, error) {
	ds, err := db.Dataset(ctx, run.DatasetID)
	if err != nil {
		return nil, err
	}
	out := &Imported{RunID: run.ID, Name: run.Name, Results: run.TotalTasks, Samples: ds.Samples, DatasetID: ds.ID,
		Dataset: ds.Name, DatasetSHA256: ds.SHA256, Existing: true}
	for _, c := range run.Conditions {
		out.Conditions = append(out.Conditions, c.Name)
	}
	return out, nil
}
