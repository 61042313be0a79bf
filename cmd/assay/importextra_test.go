package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"assay/internal/fixture"
)

// withExtra writes a copy of the aggregate file and the instance file with
// fields of another tool's added: at the top of the aggregate, inside its
// first evaluation result and its model_info, and at the top of and inside
// the instance file's second line.
func withExtra(t *testing.T, aggPath, instPath string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	var agg map[string]any
	if err := json.Unmarshal(readFile(t, aggPath), &agg); err != nil {
		t.Fatal(err)
	}
	agg["x_harness_run"] = map[string]any{"host": "gpu-7", "commit": "abc123"}
	agg["evaluation_results"].([]any)[0].(map[string]any)["x_note"] = "first pass"
	agg["model_info"].(map[string]any)["x_quantization"] = "int8"
	b, _ := json.MarshalIndent(agg, "", "  ")
	a := filepath.Join(dir, filepath.Base(aggPath))
	os.WriteFile(a, b, 0o644)

	lines := strings.Split(strings.TrimSpace(string(readFile(t, instPath))), "\n")
	var in map[string]any
	if err := json.Unmarshal([]byte(lines[1]), &in); err != nil {
		t.Fatal(err)
	}
	in["x_latency_ms"] = 812
	in["input"].(map[string]any)["x_lang"] = "en"
	b, _ = json.Marshal(in)
	lines[1] = string(b)
	i := filepath.Join(dir, filepath.Base(instPath))
	os.WriteFile(i, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	return a, i
}

// Fields another tool wrote that assay does not read are not fatal and not
// lost: the import counts them, and the run's JSON export gives each back
// with its value, the aggregate's by their path, a line's by its number.
func TestImportKeepsUnknownFields(t *testing.T) {
	for _, files := range [][2]string{
		{"eee/other-tool/6f1c0a3e-2b4d-4c8e-9f10-1a2b3c4d5e6f.json", "eee/other-tool/6f1c0a3e-2b4d-4c8e-9f10-1a2b3c4d5e6f_samples.jsonl"},
		{"eee/ask-sre_20251123_3f1c2a9e.json", "eee/ask-sre_20251123_3f1c2a9e.detailed.jsonl"},
	} {
		t.Run(filepath.Base(files[0]), func(t *testing.T) {
			dir := t.TempDir()
			aggPath, instPath := fixture.Path(files[0]), fixture.Path(files[1])
			plain := importEEE(t, filepath.Join(dir, "plain.db"), aggPath, instPath)
			a, i := withExtra(t, aggPath, instPath)
			db := filepath.Join(dir, "assay.db")
			got := importEEE(t, db, a, i)
			if n, n0 := got["unread_fields"].(float64), plain["unread_fields"].(float64); n != n0+5 {
				t.Errorf("unread_fields %v, want %v: the file's own %v and the five added", n, n0+5, n0)
			}
			if got["results"] != plain["results"] {
				t.Errorf("%v results, %v without the fields", got["results"], plain["results"])
			}
			var out bytes.Buffer
			if err := run(context.Background(), []string{"export", "--run", fmt.Sprint(got["run_id"]), "--format", "json", "--db", db, "-o", "-"}, &out, os.Stderr); err != nil {
				t.Fatal(err)
			}
			var export struct {
				Run struct {
					ImportExtra struct {
						Results   map[string]any            `json:"results"`
						Instances map[string]map[string]any `json:"instances"`
					} `json:"import_extra"`
				} `json:"run"`
			}
			if err := json.Unmarshal(out.Bytes(), &export); err != nil {
				t.Fatal(err)
			}
			x := export.Run.ImportExtra
			host, _ := x.Results["x_harness_run"].(map[string]any)
			if host["host"] != "gpu-7" || x.Results["evaluation_results[0].x_note"] != "first pass" || x.Results["model_info.x_quantization"] != "int8" {
				t.Errorf("the aggregate's fields kept: %v", x.Results)
			}
			if l := x.Instances["2"]; l["x_latency_ms"] != 812.0 || l["input.x_lang"] != "en" {
				t.Errorf("line 2's fields kept: %v", l)
			}
		})
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
