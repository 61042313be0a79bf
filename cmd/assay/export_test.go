package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

func TestExportCommand(t *testing.T) {
	db, id := finishedRun(t, 4)
	dir := t.TempDir()
	tests := []struct {
		format string
		check  func(t *testing.T, out []byte)
	}{
		{"json", func(t *testing.T, out []byte) {
			var got struct {
				Run     struct{ ID int64 } `json:"run"`
				Results []struct {
					SampleID string `json:"sample_id"`
					Scores   []any  `json:"scores"`
				} `json:"results"`
			}
			if err := json.Unmarshal(out, &got); err != nil || got.Run.ID != id || len(got.Results) != 24 {
				t.Fatalf("json: %v, run %d, %d results", err, got.Run.ID, len(got.Results))
			}
			if got.Results[0].SampleID != "q1" || len(got.Results[0].Scores) != 3 {
				t.Errorf("first result %+v", got.Results[0])
			}
		}},
		{"csv", func(t *testing.T, out []byte) {
			rows, err := csv.NewReader(bytes.NewReader(out)).ReadAll()
			if err != nil || len(rows) != 24*3+1 {
				t.Fatalf("csv: %v, %d rows, want 24 results × 3 metrics + header", err, len(rows))
			}
		}},
		{"html", func(t *testing.T, out []byte) {
			doc, err := goquery.NewDocumentFromReader(bytes.NewReader(out))
			if err != nil || doc.Find("#summary").Length() != 1 || doc.Find(".chart[data-option]").Length() == 0 {
				t.Fatalf("html export is not a report: %v", err)
			}
			if n := doc.Find("[src], [href]").Length(); n != 0 {
				t.Errorf("html export refers to %d files outside itself", n)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.format, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			args := []string{"export", "--run", fmt.Sprint(id), "--format", tc.format, "--db", db}
			if err := run(context.Background(), args, &stdout, &stderr); err != nil {
				t.Fatalf("export to stdout: %v (%s)", err, stderr.String())
			}
			tc.check(t, stdout.Bytes())
			file := filepath.Join(dir, "run."+tc.format)
			if err := run(context.Background(), append(args, "-o", file), &stdout, &stderr); err != nil {
				t.Fatalf("export to a file: %v", err)
			}
			written, _ := os.ReadFile(file)
			tc.check(t, written)
		})
	}
}

func TestExportCommandErrors(t *testing.T) {
	db, _ := finishedRun(t, 1)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"export", "--db", db}, "--run is required"},
		{[]string{"export", "--db", db, "--run", "1", "--format", "pdf"}, "json, csv, html, eee or keval"},
		{[]string{"export", "--db", db, "--run", "99"}, "run 99"},
	} {
		err := run(context.Background(), tc.args, &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || exitCode(err) == 0 || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want an error saying %q", tc.args, err, tc.want)
		}
	}
}
