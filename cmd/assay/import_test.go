package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"assay/internal/fixture"
)

func TestImportJSON(t *testing.T) {
	db := filepath.Join(t.TempDir(), "assay.db")
	cases := []struct {
		file, kind string
		samples    int
		args       []string
	}{
		{"humaneval.jsonl", "code", 6, nil},
		{"gsm8k.jsonl", "math", 10, nil},
		{"mmlu.jsonl", "mcq", 10, nil},
		{"keval/golden.jsonl", "qa", 5, nil},
		{"keval/one_question.jsonl", "qa", 1, nil},
		{"keval/simple.jsonl", "qa", 3, nil},
		{"keval/custom_keys.jsonl", "qa", 3, []string{"--question-key", "prompt", "--answer-key", "response"}},
		{"shared:humaneval_sample.jsonl", "code", 20, nil},
		{"shared:gsm8k_sample.jsonl", "math", 50, nil},
		{"shared:mmlu_sample.jsonl", "mcq", 50, nil},
		{"shared:k-eval/golden_sample.jsonl", "qa", 10, nil},
		{"shared:k-eval/pre_test1_questions.jsonl", "qa", 1, nil},
		{"shared:k-eval/fixture_simple_dataset.jsonl", "qa", 3, nil},
		{"shared:k-eval/fixture_custom_keys_dataset.jsonl", "qa", 3, []string{"--question-key", "prompt", "--answer-key", "response"}},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			path := fixture.Path(tc.file)
			if shared, ok := strings.CutPrefix(tc.file, "shared:"); ok {
				path = fixture.Shared(t, shared)
			}
			var out, errOut bytes.Buffer
			args := append([]string{"import", "--db", db, "--json", "--file", path}, tc.args...)
			if err := run(context.Background(), args, &out, &errOut); err != nil {
				t.Fatalf("import: %v (%s)", err, errOut.String())
			}
			var got struct {
				ID      json.Number `json:"dataset_id"`
				Name    string
				Kind    string
				Samples int
				SHA256  string
			}
			if err := json.Unmarshal(out.Bytes(), &got); err != nil {
				t.Fatalf("output is not one JSON object: %q", out.String())
			}
			if got.Kind != tc.kind || got.Samples != tc.samples || len(got.SHA256) != 64 || got.ID == "" {
				t.Fatalf("got %+v, want kind %s with %d samples", got, tc.kind, tc.samples)
			}
		})
	}
}

func TestImportBadInputExitsNonZero(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte("{\"question\":\"a\",\"answer\":\"b\"}\n{\"question\":\"c\",\"answer\":\"d\"\n"), 0o644)
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"import", "--db", filepath.Join(dir, "a.db"), "--json", "--file", bad}, &out, &errOut)
	if err == nil || exitCode(err) == 0 {
		t.Fatal("bad input must fail with a non-zero exit")
	}
	if !strings.Contains(err.Error(), "bad.jsonl: line 2") || out.Len() != 0 {
		t.Fatalf("error %q should name the file and line, stdout %q should be empty", err, out.String())
	}
}
