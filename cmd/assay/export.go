package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"assay/eee"
	"assay/internal/outfile"
	"assay/readmodel"
	"assay/store"
	"assay/tally"
)

func cmdExport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("export", stderr)
	runID := fs.Int64("run", 0, "the run to export (required)")
	format := fs.String("format", "json", "json (every result with its scores), csv (a row per result and metric), html (a self-contained report), eee (the two files of the official Every Eval Ever schema, in its repository's layout) or keval (the two files as k-eval 1.1 writes them, which k-eval view opens), into the folder -o names")
	dbPath := dbFlag(fs)
	out := fs.String("o", "", "file to write (default, or -: standard output; a device or pipe is written through); for eee and keval, the folder")
	eeeVersion := fs.String("eee-version", eee.OfficialVersion, "the official EEE schema's version --format eee writes: 0.3.0, 0.2.3 or 0.2.1")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	shape, inFolder, err := checkExport(*runID, *format, *out, *eeeVersion)
	if err != nil {
		return err
	}
	db, err := tally.Open(ctx, *dbPath)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.Run(ctx, *runID); err != nil {
		return fmt.Errorf("export: run %d: %w", *runID, err)
	}
	if inFolder {
		agg, inst, err := eee.WriteFiles(ctx, db, *runID, version, *out, shape, *eeeVersion)
		if err != nil {
			return fmt.Errorf("export: %w", err)
		}
		fmt.Fprintf(stdout, "%s\n%s\n", agg, inst)
		return nil
	}
	if *out == "" || *out == "-" {
		w := bufio.NewWriter(stdout)
		if err := readmodel.Export(ctx, db, *runID, *format, w); err != nil {
			return fmt.Errorf("export: %w", err)
		}
		return w.Flush()
	}
	return exportFile(ctx, db, *runID, *format, *out)
}

// checkExport checks export's flags, making the folder of a format that
// writes two files; it returns that format's shape, and whether it is one.
func checkExport(runID int64, format, out, eeeVersion string) (eee.Shape, bool, error) {
	if runID <= 0 {
		return 0, false, &exitError{code: 2, err: fmt.Errorf("export: --run is required")}
	}
	twoFiles := map[string]eee.Shape{"eee": eee.ShapeEEE, "keval": eee.ShapeKEval}
	shape, inFolder := twoFiles[format]
	if !inFolder && !slices.Contains(readmodel.ExportFormats(), format) {
		return 0, false, &exitError{code: 2, err: fmt.Errorf("export: --format must be json, csv, html, eee or keval, not %q", format)}
	}
	if !slices.Contains(eee.OfficialVersions, eeeVersion) {
		return 0, false, &exitError{code: 2, err: fmt.Errorf("export: --eee-version must be one of %s, not %q", strings.Join(eee.OfficialVersions, ", "), eeeVersion)}
	}
	if inFolder {
		if out == "" || out == "-" {
			return 0, false, &exitError{code: 2, err: fmt.Errorf("export: --format %s writes two files: -o must name a folder (made when missing)", format)}
		}
		if err := os.MkdirAll(out, 0o755); err != nil {
			return 0, false, &exitError{code: 2, err: fmt.Errorf("export: --format %s writes two files into -o's folder: %w", format, err)}
		}
	}
	return shape, inFolder, nil
}

// exportFile writes the export to path through outfile: a regular file is
// replaced only by a whole export, a device or FIFO written through.
func exportFile(ctx context.Context, db *store.DB, runID int64, format, path string) error {
	if err := outfile.Write(path, func(w io.Writer) error { return readmodel.Export(ctx, db, runID, format, w) }); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	return nil
}
