package ingest

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"assay"
	"assay/store"
)

func openStore(t *testing.T) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "assay.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// Import stores each sample as it is made, from a second reading of the
// file: what it stores is what Parse reads, in every format.
func TestImportStoresWhatParseReads(t *testing.T) {
	ctx := context.Background()
	db := openStore(t)
	for _, name := range []string{"gsm8k.jsonl", "mmlu.jsonl", "humaneval.jsonl"} {
		data := readDataset(t, name)
		want := mustParse(t, data, Options{Filename: name})
		d, created, err := Import(ctx, db, data, Options{Filename: name}, "")
		if err != nil || !created {
			t.Fatalf("Import(%s): created %v, %v", name, created, err)
		}
		if d.Kind != want.Kind || d.Samples != len(want.Samples) || d.SHA256 != want.SHA256 || d.AnswerKey != want.AnswerKey {
			t.Fatalf("Import(%s) = %+v, Parse read %s with %d samples", name, d, want.Kind, len(want.Samples))
		}
		got, err := db.Samples(ctx, d.ID, 0, len(want.Samples)+1)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want.Samples) {
			t.Fatalf("%s: stored %d samples, Parse read %d", name, len(got), len(want.Samples))
		}
		for i := range got {
			g, w := got[i], want.Samples[i]
			if g.SampleID != w.SampleID || g.Ordinal != w.Ordinal || g.Input != w.Input || g.Reference != w.Reference ||
				!slices.Equal(g.Choices, w.Choices) || g.Test != w.Test || g.EntryPoint != w.EntryPoint {
				t.Fatalf("%s: sample %d stored as %+v, read as %+v", name, i, g, w)
			}
		}
		if _, created, err := Import(ctx, db, data, Options{Filename: name}, ""); err != nil || created {
			t.Fatalf("Import(%s) again: created %v, %v; want the same dataset", name, created, err)
		}
	}
}

// A record found bad once many before it are stored leaves nothing
// stored: the error names its line, and the corrected file then imports.
func TestImportOfABadFileStoresNothing(t *testing.T) {
	ctx := context.Background()
	db := openStore(t)
	var b strings.Builder
	for i := 1; i <= 3000; i++ {
		fmt.Fprintf(&b, "{\"id\": \"q%d\", \"question\": \"What is %d + %d?\", \"answer\": \"%d\"}\n", i, i, i, 2*i)
	}
	good := b.String()
	bad := good + "{\"id\": \"q17\", \"question\": \"again\", \"answer\": \"0\"}\n"
	_, _, err := Import(ctx, db, []byte(bad), Options{Filename: "sums.jsonl"}, "")
	if assay.ErrorCode(err) != assay.EINVALID || !strings.Contains(err.Error(), "line 3001") || !strings.Contains(err.Error(), "q17") {
		t.Fatalf("a repeated id on line 3001: %v", err)
	}
	if ds, err := db.Datasets(ctx); err != nil || len(ds) != 0 {
		t.Fatalf("after a failed import: %d datasets (%v), want none", len(ds), err)
	}
	d, created, err := Import(ctx, db, []byte(good), Options{Filename: "sums.jsonl"}, "")
	if err != nil || !created || d.Samples != 3000 {
		t.Fatalf("the corrected file: %+v, created %v, %v", d, created, err)
	}
	if got, _ := db.Samples(ctx, d.ID, 2999, 5); len(got) != 1 || got[0].SampleID != "q3000" {
		t.Fatalf("last sample stored: %+v", got)
	}
}
