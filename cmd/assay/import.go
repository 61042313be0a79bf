package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"assay"
	"assay/eee"
	"assay/readmodel"
	"assay/store/ingest"
	"assay/tally"
)

func cmdImport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("import", stderr)
	file := fs.String("file", "", "dataset file: JSONL, a JSON array, or CSV with a header (required)")
	kind := fs.String("kind", "", "qa, mcq, math or code (default: detected from the fields)")
	name := fs.String("name", "", "dataset name (default: the file name)")
	qKey := fs.String("question-key", "", "field holding the question (qa)")
	aKey := fs.String("answer-key", "", "field holding the golden answer (qa)")
	results := fs.String("results", "", "an EEE aggregate JSON (k-eval's results): import the run, with --instances")
	instances := fs.String("instances", "", "the EEE instance JSONL that goes with --results")
	dbPath := dbFlag(fs)
	asJSON := fs.Bool("json", false, "print one JSON object")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *results != "" || *instances != "" {
		if *file != "" || *results == "" || *instances == "" {
			return &exitError{code: 2, err: fmt.Errorf("import: give --results A.json and --instances I.jsonl together, without --file")}
		}
		return importRun(ctx, *dbPath, *results, *instances, *asJSON, stdout)
	}
	if *file == "" {
		return &exitError{code: 2, err: fmt.Errorf("import: --file (a dataset) or --results and --instances (a run) is required")}
	}
	db, err := tally.Open(ctx, *dbPath)
	if err != nil {
		return err
	}
	defer db.Close()
	opts := ingest.Options{Filename: *file, Kind: assay.Kind(*kind), QuestionKey: *qKey, AnswerKey: *aKey}
	d, created, err := ingest.ImportFile(ctx, db, *file, opts, *name)
	if err != nil {
		if se, ok := errors.AsType[*assay.Error](err); ok && se.Code == assay.EINVALID {
			return err // it names the file and the line
		}
		return fmt.Errorf("import: %w", err)
	}
	if *asJSON {
		out := readmodel.NewDatasetJSON(d)
		out.Created = &created
		return json.NewEncoder(stdout).Encode(out)
	}
	verb := "Imported"
	if !created {
		verb = "Already imported (same bytes):"
	}
	fmt.Fprintf(stdout, "%s dataset %d %q: %d samples, kind %s, sha256 %s\n", verb, d.ID, d.Name, d.Samples, d.Kind, d.SHA256)
	return nil
}

// importRun imports a run from EEE result files.
func importRun(ctx context.Context, dbPath, results, instances string, asJSON bool, stdout io.Writer) error {
	var f eee.Files
	var err error
	f.ResultsName, f.InstancesName = results, instances
	if f.Results, err = ingest.ReadFile(results); err != nil {
		return fmt.Errorf("import: %w", err)
	}
	if f.Instances, err = eee.File(instances); err != nil { // read a line at a time, twice: no size limit
		return fmt.Errorf("import: %w", err)
	}
	db, err := tally.Open(ctx, dbPath)
	if err != nil {
		return err
	}
	defer db.Close()
	out, err := eee.Import(ctx, db, f)
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	if asJSON {
		return json.NewEncoder(stdout).Encode(out)
	}
	if out.Existing {
		fmt.Fprintf(stdout, "Imported before: run %d %q (%d results, %s); nothing stored\n", out.RunID, out.Name, out.Results,
			plural(len(out.Conditions), "condition"))
		return nil
	}
	fmt.Fprintf(stdout, "Imported run %d %q: %d results, %s on dataset %d %q (sha256 %s)\n", out.RunID, out.Name, out.Results,
		plural(len(out.Conditions), "condition"), out.DatasetID, out.Dataset, out.DatasetSHA256)
	if out.UnreadFields > 0 {
		fmt.Fprintf(stdout, "Kept %s the files hold that assay does not read: in the run's JSON export, under run.import_extra\n",
			plural(out.UnreadFields, "field"))
	}
	return nil
}
