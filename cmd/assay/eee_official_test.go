package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"assay/internal/fixture"
	"assay/runner/llm/llmtest"
	"assay/tally"
)

// officialSchema compiles one of the official EEE schemas of ../shared/eee-schemas.
func officialSchema(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	path := fixture.SharedSchema(t, name)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(name, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(name)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return s
}

// validOfficial checks an aggregate file and every line of its instance
// file against the official schemas of version, and returns the lines.
func validOfficial(t *testing.T, version, aggPath, instPath string) []map[string]any {
	t.Helper()
	aggSchema := officialSchema(t, version+"-eval.schema.json")
	instSchema := officialSchema(t, version+"-instance_level_eval.schema.json")
	b, err := os.ReadFile(aggPath)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if err := aggSchema.Validate(doc); err != nil {
		t.Errorf("%s is not valid against the %s schema: %v", filepath.Base(aggPath), version, err)
	}
	f, err := os.Open(instPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for n := 1; sc.Scan(); n++ {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(sc.Bytes()))
		if err != nil {
			t.Fatalf("%s:%d: %v", instPath, n, err)
		}
		if err := instSchema.Validate(doc); err != nil {
			t.Errorf("%s:%d is not valid against the %s instance schema: %v", filepath.Base(instPath), n, version, err)
		}
		var line map[string]any
		json.Unmarshal(sc.Bytes(), &line)
		lines = append(lines, line)
	}
	return lines
}

// exportVersion exports a run as official EEE files of a schema version.
func exportVersion(t *testing.T, db string, id int64, version string) (aggregate, instances string) {
	t.Helper()
	var out bytes.Buffer
	args := []string{"export", "--run", fmt.Sprint(id), "--format", "eee", "--eee-version", version, "--db", db, "-o", filepath.Join(t.TempDir(), "eee")}
	if err := run(context.Background(), args, &out, os.Stderr); err != nil {
		t.Fatalf("export: %v", err)
	}
	paths := strings.Fields(out.String())
	if len(paths) != 2 {
		t.Fatalf("export printed %q", out.String())
	}
	return paths[0], paths[1]
}

// A run's EEE files are valid against each official schema version they
// are written in, with a line per answer and metric, and one per failed
// answer.
func TestEEEExportIsValidAgainstTheOfficialSchemas(t *testing.T) {
	db, id := finishedRun(t, 4)
	for _, version := range []string{"0.3.0", "0.2.3", "0.2.1"} {
		t.Run(version, func(t *testing.T) {
			aggPath, instPath := exportVersion(t, db, id, version)
			lines := validOfficial(t, version, aggPath, instPath)
			// 4 samples × 2 conditions × 3 repetitions × 3 metrics.
			if len(lines) != 72 {
				t.Errorf("%d instance lines, want 72", len(lines))
			}
			var agg struct {
				SchemaVersion string           `json:"schema_version"`
				Results       []map[string]any `json:"evaluation_results"`
				Detailed      map[string]any   `json:"detailed_evaluation_results"`
			}
			b, _ := os.ReadFile(aggPath)
			json.Unmarshal(b, &agg)
			if agg.SchemaVersion != version || len(agg.Results) != 6 || agg.Detailed["total_rows"] != 72.0 {
				t.Errorf("aggregate: version %s, %d results, detailed %v", agg.SchemaVersion, len(agg.Results), agg.Detailed)
			}
		})
	}
}

// A run with a judge panel, judge repetitions and failed answers: its
// files are valid, and read back they give the same report.
func TestEEEOfAPanelRoundTrips(t *testing.T) {
	failing := func(next llmtest.Handler) llmtest.Handler {
		return func(req *llmtest.ChatRequest) llmtest.Reply {
			if strings.Contains(string(req.Body), "What is 2 + 2?") && !strings.Contains(string(req.Body), "judge") {
				return llmtest.Reply{Status: 400, Content: "this question is refused"}
			}
			return next(req)
		}
	}
	srv := llmtest.New(failing(varied()))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	writeSums(dir, 3)
	os.WriteFile(filepath.Join(dir, "run.yaml"), fmt.Appendf(nil, `name: panel
dataset: {path: ./questions.jsonl}
agent: {type: openai, model: agent-model, base_url: %[1]q}
judges:
  - {name: first, model: judge-a, base_url: %[1]q, seed: 7}
  - {name: second, model: judge-b, base_url: %[1]q, seed: 7}
judge_repetitions: 2
conditions:
  baseline: {system_prompt: "Answer briefly."}
  with-docs: {system_prompt: "Answer briefly; read the docs first."}
execution: {num_repetitions: 2, max_concurrent: 4}
`, srv.URL), 0o644)
	db := filepath.Join(dir, "assay.db")
	if err := run(context.Background(), []string{"run", "--config", filepath.Join(dir, "run.yaml"), "--db", db, "--quiet", "--max-error-rate", "1"}, io.Discard, io.Discard); err != nil && exitCodeOf(err) != 2 {
		t.Fatalf("assay run: %v", err)
	}
	id := lastRun(t, db)
	aggPath, instPath := exportVersion(t, db, id, "0.3.0")
	lines := validOfficial(t, "0.3.0", aggPath, instPath)
	failed := 0
	for _, l := range lines {
		if l["error"] != nil {
			failed++
		}
	}
	if failed != 4 { // q2 × 2 conditions × 2 repetitions
		t.Errorf("%d lines of failed answers, want 4", failed)
	}
	b, _ := os.ReadFile(aggPath)
	var agg struct {
		Results []struct {
			MetricConfig struct {
				LLMScoring struct {
					Judges []struct {
						ModelInfo struct {
							ID string `json:"id"`
						} `json:"model_info"`
					} `json:"judges"`
				} `json:"llm_scoring"`
			} `json:"metric_config"`
		} `json:"evaluation_results"`
	}
	json.Unmarshal(b, &agg)
	if len(agg.Results) == 0 || len(agg.Results[0].MetricConfig.LLMScoring.Judges) != 2 ||
		agg.Results[0].MetricConfig.LLMScoring.Judges[1].ModelInfo.ID != "judge-b" {
		t.Errorf("llm_scoring of the first result: %+v", agg.Results)
	}

	orig, _ := loadReport(t, db, id)
	got := importEEE(t, filepath.Join(dir, "back.db"), aggPath, instPath)
	back, _ := loadReport(t, filepath.Join(dir, "back.db"), int64(got["run_id"].(float64)))
	sameSummary(t, orig.Summary, back.Summary)
	if len(back.Config.Judges) != 2 || back.Config.JudgeRepetitions != 2 || back.Run.Repetitions != 2 {
		t.Errorf("read back: judges %+v, judge repetitions %d, repetitions %d", back.Config.Judges, back.Config.JudgeRepetitions, back.Run.Repetitions)
	}
	for i, c := range orig.Summary.Conditions {
		if b := back.Summary.Conditions[i]; c.Errors != b.Errors || c.CostUSD != b.CostUSD || c.TokensIn != b.TokensIn {
			t.Errorf("%s: errors %d, cost %v, tokens %d; read back %d, %v, %d", c.Name, c.Errors, c.CostUSD, c.TokensIn, b.Errors, b.CostUSD, b.TokensIn)
		}
	}
	s, err := tally.Open(context.Background(), filepath.Join(dir, "back.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	results, _ := s.Results(context.Background(), int64(got["run_id"].(float64)))
	judged := 0
	for _, r := range results {
		if r.Error != "" {
			continue
		}
		// Two judges × two judge repetitions of one evaluator.
		if len(r.Judgements) != 4 {
			t.Errorf("result %s/%d: %d judgements, want 4", r.Condition, r.Repetition, len(r.Judgements))
		}
		judged++
	}
	if judged != 8 {
		t.Errorf("%d judged results read back, want 8", judged)
	}
}

// Another tool's EEE 0.3.0 files — a metric per evaluation result named by
// its evaluation_name alone, no metadata of assay's — are valid against the
// schema, and import: a run of one condition whose figure is the files'.
func TestImportAnotherToolsEEE(t *testing.T) {
	const stem = "eee/other-tool/6f1c0a3e-2b4d-4c8e-9f10-1a2b3c4d5e6f"
	aggPath, instPath := fixture.Path(stem+".json"), fixture.Path(stem+"_samples.jsonl")
	validOfficial(t, "0.3.0", aggPath, instPath)
	db := filepath.Join(t.TempDir(), "assay.db")
	got := importEEE(t, db, aggPath, instPath)
	if got["results"] != 5.0 || got["samples"] != 5.0 || got["name"] != "gsm8k" {
		t.Fatalf("import printed %v", got)
	}
	r, _ := loadReport(t, db, int64(got["run_id"].(float64)))
	if len(r.Summary.Conditions) != 1 || len(r.Summary.Conditions[0].Metrics) != 1 {
		t.Fatalf("summary: %+v", r.Summary.Conditions)
	}
	// By hand: 1, 1, 0, 1, 0 → 0.6, as the aggregate file says.
	m := r.Summary.Conditions[0].Metrics[0]
	if m.Name != "accuracy" || m.N != 5 || math.Abs(m.Mean-0.6) > 1e-12 {
		t.Errorf("accuracy = %+v, want the mean 0.6 of 5 scores", m)
	}
	if r.Config.Agent.Model != "example-org/tiny-math-7b" || r.Summary.Conditions[0].TokensIn != 400 {
		t.Errorf("model %q, tokens in %d", r.Config.Agent.Model, r.Summary.Conditions[0].TokensIn)
	}

	// A line naming a result the aggregate file has not: refused, by line.
	lines := strings.SplitAfter(string(fixture.Read(t, stem+"_samples.jsonl")), "\n")
	bad := filepath.Join(t.TempDir(), "bad_samples.jsonl")
	os.WriteFile(bad, []byte(lines[0]+strings.Replace(lines[1], `"evaluation_name": "gsm8k"`, `"evaluation_name": "math"`, 1)), 0o644)
	err := run(context.Background(), []string{"import", "--results", aggPath, "--instances", bad, "--db", db}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "bad_samples.jsonl:2: evaluation_name \"math\"") {
		t.Errorf("a line of another evaluation: %v", err)
	}
}

// deleteAt removes the field at path (a.b, a[0].b) from doc.
func deleteAt(doc any, path string) {
	parts := strings.Split(path, ".")
	for i, p := range parts {
		name, index, hasIndex := strings.Cut(strings.TrimSuffix(p, "]"), "[")
		m := doc.(map[string]any)
		if i == len(parts)-1 {
			delete(m, name)
			return
		}
		doc = m[name]
		if hasIndex {
			n, _ := strconv.Atoi(index)
			doc = doc.([]any)[n]
		}
	}
}

// setAt sets the field at path to v.
func setAt(doc any, path string, v any) {
	parts := strings.Split(path, ".")
	for _, p := range parts[:len(parts)-1] {
		name, index, hasIndex := strings.Cut(strings.TrimSuffix(p, "]"), "[")
		doc = doc.(map[string]any)[name]
		if hasIndex {
			n, _ := strconv.Atoi(index)
			doc = doc.([]any)[n]
		}
	}
	doc.(map[string]any)[parts[len(parts)-1]] = v
}

// Another tool's files that the official schema refuses — a required field
// missing, a value it does not allow — are refused by the import too,
// naming the field, and nothing is stored.
func TestImportRefusesWhatTheSchemaRefuses(t *testing.T) {
	const stem = "eee/other-tool/6f1c0a3e-2b4d-4c8e-9f10-1a2b3c4d5e6f"
	aggRaw, instRaw := fixture.Read(t, stem+".json"), fixture.Read(t, stem+"_samples.jsonl")
	aggSchema := officialSchema(t, "0.3.0-eval.schema.json")
	instSchema := officialSchema(t, "0.3.0-instance_level_eval.schema.json")
	lines := strings.SplitAfter(strings.TrimSpace(string(instRaw)), "\n")
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	for _, tc := range []struct {
		aggregate bool
		path      string
		set       any // nil: delete the field
		want      string
	}{
		{true, "evaluation_id", nil, "evaluation_id: required by the EEE schema 0.3.0"},
		{true, "source_metadata.evaluator_relationship", nil, "source_metadata.evaluator_relationship: required"},
		{true, "source_metadata.evaluator_relationship", "self", `source_metadata.evaluator_relationship: "self" is not one of first_party, third_party, collaborative, other`},
		{true, "model_info.additional_details", nil, "model_info.additional_details: required"},
		{true, "eval_library.version", nil, "eval_library.version: required"},
		{true, "evaluation_results[0].metric_config.lower_is_better", nil, "evaluation_results[0].metric_config.lower_is_better: required"},
		{true, "evaluation_results[0].metric_config.score_type", "composite", `evaluation_results[0].metric_config.score_type: "composite" is not one of`},
		{true, "evaluation_results[0].score_details.score", nil, "evaluation_results[0].score_details.score: required"},
		{false, "evaluation.is_correct", nil, "_samples.jsonl:2: evaluation.is_correct: required"},
		{false, "answer_attribution[0].is_terminal", nil, "answer_attribution[0].is_terminal: required"},
		{false, "input.reference", nil, "input.reference: required"},
		{false, "interaction_type", "chat", `interaction_type: "chat" is not one of single_turn, multi_turn, agentic`},
		{false, "output", nil, "output: required of a single_turn line"},
	} {
		aggText, instText := string(aggRaw), string(instRaw)
		var doc any
		if tc.aggregate {
			json.Unmarshal(aggRaw, &doc)
		} else {
			json.Unmarshal([]byte(lines[1]), &doc)
		}
		if tc.set == nil {
			deleteAt(doc, tc.path)
		} else {
			setAt(doc, tc.path, tc.set)
		}
		b, _ := json.Marshal(doc)
		schema := aggSchema
		if tc.aggregate {
			aggText = string(b)
		} else {
			instText = lines[0] + string(b) + "\n" + strings.Join(lines[2:], "")
			schema = instSchema
		}
		parsed, _ := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if schema.Validate(parsed) == nil {
			t.Fatalf("%s: the official schema takes the file: the case tests nothing", tc.path)
		}
		aggPath, instPath := filepath.Join(dir, "bad.json"), filepath.Join(dir, "bad_samples.jsonl")
		os.WriteFile(aggPath, []byte(aggText), 0o644)
		os.WriteFile(instPath, []byte(instText), 0o644)
		err := run(context.Background(), []string{"import", "--results", aggPath, "--instances", instPath, "--db", db}, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.path, err, tc.want)
		}
	}
	if n := storedRuns(t, db); n != 0 {
		t.Errorf("refused files stored %d runs", n)
	}
}

// A score outside its metric's scale (1e308 on a pass metric) is refused
// at import, naming the file and line, and nothing is stored: stored, it
// made every export and the run's API answer fail.
func TestImportRefusesAScoreOffItsScale(t *testing.T) {
	const stem = "eee/other-tool/6f1c0a3e-2b4d-4c8e-9f10-1a2b3c4d5e6f"
	lines := strings.SplitAfter(strings.TrimSpace(string(fixture.Read(t, stem+"_samples.jsonl"))), "\n")
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	for _, score := range []string{"1e308", "2", "-1"} {
		instPath := filepath.Join(dir, "huge_samples.jsonl")
		bad := strings.Replace(lines[1], `"score": 1`, `"score": `+score, 1)
		if bad == lines[1] {
			t.Fatal("the fixture's second line has no score of 1")
		}
		os.WriteFile(instPath, []byte(lines[0]+bad+strings.Join(lines[2:], "")), 0o644)
		err := run(context.Background(), []string{"import", "--results", fixture.Path(stem + ".json"), "--instances", instPath, "--db", db}, io.Discard, io.Discard)
		if exitCodeOf(err) != 1 || !strings.Contains(err.Error(), "huge_samples.jsonl:2: the score of") || !strings.Contains(err.Error(), "outside its metric's") {
			t.Errorf("a score of %s: exit %d, %v", score, exitCodeOf(err), err)
		}
	}
	if n := storedRuns(t, db); n != 0 {
		t.Errorf("refused files stored %d runs", n)
	}
}
