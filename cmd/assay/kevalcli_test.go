package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"assay/runner/llm/llmtest"
)

// kevalRunFile writes a run file in k-eval's words and a dataset beside it.
func kevalRunFile(t *testing.T, baseURL string) string {
	t.Helper()
	dir := t.TempDir()
	writeSums(dir, 2)
	path := filepath.Join(dir, "config.yaml")
	os.WriteFile(path, fmt.Appendf(nil, `name: ask-sre
dataset: {path: ./questions.jsonl}
agent: {type: openai, model: agent-model, base_url: %q}
judge: {model: judge-model, base_url: %q}
conditions: {baseline: {system_prompt: "Answer."}}
execution: {num_repetitions: 1}
`, baseURL, baseURL), 0o644)
	return path
}

// A k-eval user's command line runs as typed: the run file first, -o for
// the result files (k-eval's pair, named as k-eval names them), -q for
// nothing printed on success.
func TestRunTakesKEvalsCommandLine(t *testing.T) {
	srv := llmtest.New(varied())
	t.Cleanup(srv.Close)
	cfg := kevalRunFile(t, srv.URL)
	out := filepath.Join(t.TempDir(), "results")
	db := filepath.Join(t.TempDir(), "assay.db")
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"run", cfg, "-o", out, "--db", db, "-q"}, &stdout, &stderr); err != nil {
		t.Fatalf("assay run CONFIG -o DIR -q: %v\n%s", err, stderr.String())
	}
	if stdout.Len() != 0 || stderr.Len() != 0 {
		t.Errorf("-q printed on success:\nstdout %q\nstderr %q", stdout.String(), stderr.String())
	}
	files, _ := filepath.Glob(filepath.Join(out, "*"))
	name := regexp.MustCompile(`/ask-sre_\d{8}_[0-9a-f]{8}\.(json|detailed\.jsonl)$`)
	if len(files) != 2 || !name.MatchString(files[0]) || !name.MatchString(files[1]) {
		t.Errorf("-o wrote %q, want NAME_YYYYMMDD_XXXXXXXX.json and .detailed.jsonl", files)
	}
	// --format eee writes the official files instead; --config still works.
	eeeOut := filepath.Join(t.TempDir(), "eee")
	if err := run(context.Background(), []string{"run", "--config", cfg, "--output-dir", eeeOut, "--format", "eee", "--db", db, "--quiet"}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if got, _ := filepath.Glob(filepath.Join(eeeOut, "data", "*", "*", "*", "*_samples.jsonl")); len(got) != 1 {
		t.Errorf("--format eee wrote %q", got)
	}
	for _, args := range [][]string{{"run", cfg, "--config", "other.yaml"}, {"run", cfg, cfg + "2"}, {"run", cfg, "--format", "csv"}, {"run", cfg, "--log-format", "xml"}} {
		if err := run(context.Background(), append(args, "--db", db), &stdout, &stderr); exitCodeOf(err) != 3 {
			t.Errorf("%q: exit %d (%v), want 3", args, exitCodeOf(err), err)
		}
	}
}

// --log-format json writes every line on stderr as one JSON object in
// k-eval's structlog shape — event, level, timestamp and the fields — its
// failures too.
func TestRunLogsJSONLines(t *testing.T) {
	srv := llmtest.New(varied())
	t.Cleanup(srv.Close)
	cfg := kevalRunFile(t, srv.URL)
	db := filepath.Join(t.TempDir(), "assay.db")
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"run", cfg, "-o", t.TempDir(), "--db", db, "--log-format", "json"}, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	events := jsonLines(t, stderr.String())
	if len(events) < 2 || events[0]["event"] != "run created" || events[len(events)-1]["event"] != "results written" ||
		events[0]["run_id"] != 1.0 || events[0]["tasks"] != 2.0 {
		t.Errorf("events: %v", events)
	}
	if !strings.Contains(stdout.String(), "condition") {
		t.Errorf("the summary is not on stdout: %q", stdout.String())
	}
	stderr.Reset()
	err := run(context.Background(), []string{"run", "missing.yaml", "--db", db, "--log-format", "json"}, &stdout, &stderr)
	events = jsonLines(t, stderr.String())
	if exitCodeOf(err) != 3 || finish(err, &stderr) != 3 || len(jsonLines(t, stderr.String())) != len(events) ||
		len(events) != 1 || events[0]["level"] != "error" || !strings.Contains(fmt.Sprint(events[0]["message"]), "missing.yaml") {
		t.Errorf("a failure in JSON: exit %d, %q", exitCodeOf(err), stderr.String())
	}
}

// jsonLines reads text as JSON objects, one a line, each with k-eval's keys.
func jsonLines(t *testing.T, text string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("a line that is not a JSON object: %q", line)
		}
		if m["event"] == nil || m["level"] == nil || !regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z$`).MatchString(fmt.Sprint(m["timestamp"])) {
			t.Errorf("a line without event, level and timestamp: %q", line)
		}
		out = append(out, m)
	}
	return out
}

// assay schema run-file prints the run file's JSON Schema: its committed
// copy, docs/run-file.schema.json.
func TestSchemaRunFilePrintsTheCommittedSchema(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"schema", "run-file"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile(filepath.Join("..", "..", "docs", "run-file.schema.json"))
	if err != nil || !bytes.Equal(out.Bytes(), committed) {
		t.Errorf("assay schema run-file differs from docs/run-file.schema.json (%v)", err)
	}
	var doc map[string]any
	if json.Unmarshal(out.Bytes(), &doc) != nil || doc["$schema"] != "https://json-schema.org/draft/2020-12/schema" {
		t.Errorf("not a draft 2020-12 schema: %.200s", out.String())
	}
	if err := run(context.Background(), []string{"schema", "other"}, io.Discard, io.Discard); exitCodeOf(err) != 2 {
		t.Errorf("assay schema other: exit %d", exitCodeOf(err))
	}
}
