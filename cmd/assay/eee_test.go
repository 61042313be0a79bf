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
	"regexp"
	"strconv"
	"strings"
	"testing"

	"assay/internal/fixture"
	"assay/report"
	"assay/runner/llm/llmtest"
	"assay/store"
	"assay/tally"
)

// exportEEE exports a run as EEE files into a new folder and returns their paths.
func exportEEE(t *testing.T, db string, id int64) (aggregate, instances string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "results", "eee") // made by the export
	var out bytes.Buffer
	if err := run(context.Background(), []string{"export", "--run", fmt.Sprint(id), "--format", "eee", "--db", db, "-o", dir}, &out, os.Stderr); err != nil {
		t.Fatalf("export: %v", err)
	}
	paths := strings.Fields(out.String())
	if len(paths) != 2 || !strings.HasSuffix(paths[0], ".json") || paths[1] != strings.TrimSuffix(paths[0], ".json")+"_samples.jsonl" ||
		!strings.HasPrefix(paths[0], filepath.Join(dir, "data")+string(filepath.Separator)) {
		t.Fatalf("export printed %q, want DIR/data/RUN/DEVELOPER/MODEL/UUID.json and UUID_samples.jsonl", out.String())
	}
	return paths[0], paths[1]
}

// importEEE imports EEE files into db and returns what --json printed.
func importEEE(t *testing.T, db, aggregate, instances string) map[string]any {
	t.Helper()
	var out bytes.Buffer
	if err := run(context.Background(), []string{"import", "--results", aggregate, "--instances", instances, "--db", db, "--json"}, &out, os.Stderr); err != nil {
		t.Fatalf("import: %v", err)
	}
	var got map[string]any
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("import --json: %v: %s", err, out.String())
	}
	return got
}

func loadReport(t *testing.T, path string, id int64) (*report.Report, map[int64]string) {
	t.Helper()
	db, err := tally.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	r, err := report.Load(context.Background(), db, id)
	if err != nil {
		t.Fatal(err)
	}
	names, err := db.SampleIDs(context.Background(), r.Dataset.ID)
	if err != nil {
		t.Fatal(err)
	}
	return r, names
}

func TestEEERoundTrip(t *testing.T) {
	db, id := finishedRun(t, 6)
	aggPath, instPath := exportEEE(t, db, id)

	var agg struct {
		SchemaVersion     string `json:"schema_version"`
		EvaluationResults []struct {
			EvaluationName string `json:"evaluation_name"`
			MetricConfig   struct {
				MetricID string `json:"metric_id"`
			} `json:"metric_config"`
		} `json:"evaluation_results"`
		Detailed struct {
			FilePath string `json:"file_path"`
		} `json:"detailed_evaluation_results"`
	}
	b, _ := os.ReadFile(aggPath)
	if err := json.Unmarshal(b, &agg); err != nil {
		t.Fatal(err)
	}
	// A result per condition and metric; the instance file named by its
	// path from the folder holding data/.
	if agg.SchemaVersion != "0.3.0" || len(agg.EvaluationResults) != 6 || agg.EvaluationResults[0].EvaluationName != "docs-or-not/baseline" ||
		agg.EvaluationResults[0].MetricConfig.MetricID != "rubric.factual_adherence" || !strings.HasSuffix(instPath, filepath.FromSlash(agg.Detailed.FilePath)) {
		t.Fatalf("aggregate = %+v", agg)
	}
	f, _ := os.Open(instPath)
	defer f.Close()
	lines := 0
	for sc := bufio.NewScanner(f); sc.Scan(); lines++ {
		var in struct {
			SchemaVersion string            `json:"schema_version"`
			SampleID      string            `json:"sample_id"`
			Metadata      map[string]string `json:"metadata"`
		}
		if err := json.Unmarshal(sc.Bytes(), &in); err != nil {
			t.Fatal(err)
		}
		if in.SchemaVersion != "0.3.0" || in.SampleID == "" || in.Metadata["assay_condition"] == "" || in.Metadata["assay_judgements"] == "" {
			t.Fatalf("instance line %d = %s", lines+1, sc.Bytes())
		}
	}
	if lines != 108 {
		t.Errorf("%d instance lines, want 6 samples × 2 conditions × 3 repetitions × 3 metrics", lines)
	}

	orig, origNames := loadReport(t, db, id)
	fresh := filepath.Join(t.TempDir(), "fresh.db")
	for _, tc := range []struct {
		name, db       string
		datasetCreated bool
	}{{"into a new database", fresh, true}, {"beside the original", db, false}} {
		t.Run(tc.name, func(t *testing.T) {
			got := importEEE(t, tc.db, aggPath, instPath)
			if got["dataset_created"] != tc.datasetCreated || got["results"] != 36.0 || got["dataset_sha256"] != orig.Dataset.SHA256 {
				t.Errorf("import printed %v", got)
			}
			back, backNames := loadReport(t, tc.db, int64(got["run_id"].(float64)))
			if back.Run.Status != store.RunCompleted || back.Run.Origin != store.OriginEEE {
				t.Errorf("imported run is %s, origin %q", back.Run.Status, back.Run.Origin)
			}
			sameSummary(t, orig.Summary, back.Summary)
			for m, metric := range orig.Metrics {
				bm := back.MetricIndex(metric.Evaluator, metric.Name)
				if bm < 0 {
					t.Fatalf("imported run lacks %s", metric.Label())
				}
				for _, c := range orig.Conditions {
					want := map[string][]float64{}
					for _, s := range orig.Samples(m, c) {
						want[origNames[s.SampleRow]] = s.Values()
					}
					gotScores := map[string][]float64{}
					for _, s := range back.Samples(bm, c) {
						gotScores[backNames[s.SampleRow]] = s.Values()
					}
					if fmt.Sprint(want) != fmt.Sprint(gotScores) {
						t.Errorf("%s under %s: per-sample scores %v, want %v", metric.Label(), c, gotScores, want)
					}
				}
			}
		})
	}
}

// sameSummary compares what two summaries measured.
func sameSummary(t *testing.T, a, b *report.Summary) {
	t.Helper()
	if len(a.Conditions) != len(b.Conditions) || a.DatasetSHA256 != b.DatasetSHA256 || a.Results != b.Results {
		t.Fatalf("summaries differ: %d vs %d conditions, %d vs %d results", len(a.Conditions), len(b.Conditions), a.Results, b.Results)
	}
	for i, ca := range a.Conditions {
		cb := b.Conditions[i]
		if ca.Name != cb.Name || len(ca.Metrics) != len(cb.Metrics) || ca.Errors != cb.Errors {
			t.Fatalf("condition %d: %s (%d metrics) vs %s (%d)", i, ca.Name, len(ca.Metrics), cb.Name, len(cb.Metrics))
		}
		for j, ma := range ca.Metrics {
			mb := cb.Metrics[j]
			close := func(x, y float64) bool { return math.Abs(x-y) < 1e-9 }
			if ma.Evaluator != mb.Evaluator || ma.Name != mb.Name || ma.N != mb.N || !close(ma.Mean, mb.Mean) || !close(ma.Std, mb.Std) ||
				!close(ma.Stderr, mb.Stderr) || !close(ma.CI95[0], mb.CI95[0]) || !close(ma.CI95[1], mb.CI95[1]) {
				t.Errorf("%s %s.%s: %+v, want %+v", ca.Name, ma.Evaluator, ma.Name, mb, ma)
			}
		}
	}
}

func TestImportKEvalFiles(t *testing.T) {
	db := filepath.Join(t.TempDir(), "assay.db")
	aggPath := fixture.Path("eee/ask-sre_20251123_3f1c2a9e.json")
	instPath := fixture.Path("eee/ask-sre_20251123_3f1c2a9e.detailed.jsonl")
	// The dataset the files were made from is there already: the run joins it.
	var out bytes.Buffer
	if err := run(context.Background(), []string{"import", "--file", fixture.Path("keval/simple.jsonl"), "--db", db, "--json"}, &out, os.Stderr); err != nil {
		t.Fatal(err)
	}
	got := importEEE(t, db, aggPath, instPath)
	if got["dataset_created"] != false || got["results"] != 12.0 || got["name"] != "ask-sre" {
		t.Errorf("import printed %v", got)
	}
	r, _ := loadReport(t, db, int64(got["run_id"].(float64)))
	// By hand: baseline completeness 4,5 | 3,3 | 2,2 → 19/6; with_graph 5,5 | 4,4 | 4,4 → 26/6.
	want := map[string]float64{"baseline": 19.0 / 6, "with_graph": 26.0 / 6}
	for _, c := range r.Summary.Conditions {
		for _, m := range c.Metrics {
			if m.Name == "completeness" && (math.Abs(m.Mean-want[c.Name]) > 1e-9 || m.N != 6 || m.Samples != 3 || m.Evaluator != "rubric") {
				t.Errorf("%s completeness = %+v, want mean %.4f over 6 scores of 3 samples", c.Name, m, want[c.Name])
			}
		}
		if c.CostUSD < 0.0738 || c.CostUSD > 0.0739 || c.TokensIn != 7200 {
			t.Errorf("%s: cost %v, tokens in %d; want 6 × $0.0123 and 3 × 2,400", c.Name, c.CostUSD, c.TokensIn)
		}
	}
	if r.Config.Agent.Model != "claude-sonnet-4-5" || r.Run.Repetitions != 2 {
		t.Errorf("model %q, repetitions %d", r.Config.Agent.Model, r.Run.Repetitions)
	}
	// The same files again: the run they made, nothing stored.
	again := importEEE(t, db, aggPath, instPath)
	if again["existing"] != true || again["run_id"] != got["run_id"] || again["results"] != 12.0 {
		t.Errorf("imported again: %v", again)
	}
	if storedRuns(t, db) != 1 {
		t.Errorf("%d runs after importing the same files twice", storedRuns(t, db))
	}
	// Once that run is deleted, they import anew.
	s, err := tally.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeleteRun(context.Background(), int64(got["run_id"].(float64))); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if third := importEEE(t, db, aggPath, instPath); third["existing"] != false || storedRuns(t, db) != 1 {
		t.Errorf("imported after the run was deleted: %v", third)
	}
}

// An instances file over the 64 MiB a dataset may take imports: it is
// read a line at a time, twice, never held whole (a 150,000-result run's is
// 445 MB). Here the fixture's lines, each followed by 12 MB of blank lines
// (a file of long answers would take the race detector a minute to read).
func TestImportEEEOverADatasetsLimit(t *testing.T) {
	dir := t.TempDir()
	raw, err := os.ReadFile(fixture.Path("eee/ask-sre_20251123_3f1c2a9e.detailed.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	blank := bytes.Repeat([]byte(strings.Repeat(" ", 1<<20-1)+"\n"), 12)
	var big bytes.Buffer
	for _, line := range bytes.Split(bytes.TrimSpace(raw), []byte("\n")) {
		big.Write(line)
		big.WriteByte('\n')
		big.Write(blank)
	}
	if big.Len() <= 64<<20 {
		t.Fatalf("the file is %d bytes, not over 64 MiB: the test tests nothing", big.Len())
	}
	instances := filepath.Join(dir, "big.detailed.jsonl")
	if err := os.WriteFile(instances, big.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "assay.db")
	got := importEEE(t, db, fixture.Path("eee/ask-sre_20251123_3f1c2a9e.json"), instances)
	if got["results"] != 12.0 || got["samples"] != 3.0 {
		t.Errorf("import printed %v, want 12 results of 3 samples", got)
	}
}

func TestImportEEERefusesBadFiles(t *testing.T) {
	aggPath := fixture.Path("eee/ask-sre_20251123_3f1c2a9e.json")
	inst := fixture.Read(t, "eee/ask-sre_20251123_3f1c2a9e.detailed.jsonl")
	agg := fixture.Read(t, "eee/ask-sre_20251123_3f1c2a9e.json")
	lines := strings.SplitAfter(strings.TrimSpace(string(inst)), "\n")
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(text), 0o644)
		return p
	}
	db := filepath.Join(dir, "assay.db")
	for _, tc := range []struct {
		name, agg, inst, want string
	}{
		{"a line missing", aggPath, write("partial.jsonl", strings.Join(lines[:5], "")), "partial.jsonl: condition \"with_graph\" has 2 of the 3 samples: a partial file?"},
		{"a condition missing", aggPath, write("half.jsonl", strings.Join(lines[:3], "")), `half.jsonl: no line for condition "with_graph"`},
		{"bad JSON", aggPath, write("broken.jsonl", lines[0]+lines[1]+"{\"schema_version\": \n"+strings.Join(lines[3:], "")), "broken.jsonl:3: "},
		{"a wrong type", aggPath, write("typed.jsonl", lines[0]+strings.Replace(lines[1], `"repetition_index": 0`, `"repetition_index": "first"`, 1)), "typed.jsonl:2: "},
		{"another run's line", aggPath, write("other.jsonl", strings.Replace(string(inst), "ask-sre/baseline", "other/baseline", 1)), `other.jsonl:1: evaluation_name "other/baseline" is not one of`},
		{"a repeated line", aggPath, write("twice.jsonl", string(inst)+lines[0]), "twice.jsonl:7: sample_idx 0 under \"baseline\" again (first at line 1)"},
		{"an old schema", write("old.json", strings.Replace(string(agg), `"0.2.1"`, `"0.1.0"`, 1)), fixture.Path("eee/ask-sre_20251123_3f1c2a9e.detailed.jsonl"), `old.json: schema_version "0.1.0": want "0.2.1"`},
		{"a score off its scale", aggPath, write("huge.jsonl", lines[0]+strings.Replace(lines[1], `"completeness": 3,`, `"completeness": 1e308,`, 1)+strings.Join(lines[2:], "")),
			"huge.jsonl:2: run_details[0].scores.completeness is 1e+308: outside its metric's scale (1–5)"},
		{"aggregate not JSON", write("bad.json", "{\n  \"schema_version\": \"0.2.1\",\n  oops\n}"), fixture.Path("eee/ask-sre_20251123_3f1c2a9e.detailed.jsonl"), "bad.json: line 3: "},
	} {
		var out, errOut bytes.Buffer
		err := run(context.Background(), []string{"import", "--results", tc.agg, "--instances", tc.inst, "--db", db, "--json"}, &out, &errOut)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
	s, _ := tally.Open(context.Background(), db)
	defer s.Close()
	if runs, _ := tally.Of(s).Runs(context.Background()); len(runs) != 0 {
		t.Errorf("bad files stored %d runs", len(runs))
	}
	if ds, _ := s.Datasets(context.Background()); len(ds) != 0 {
		t.Errorf("bad files stored %d datasets", len(ds))
	}

	// Files naming the SHA-256 of a dataset whose questions differ were not
	// made from it: refused, nothing stored.
	golden := fixture.Path("keval/golden.jsonl")
	if err := run(context.Background(), []string{"import", "--file", golden, "--db", db}, &bytes.Buffer{}, os.Stderr); err != nil {
		t.Fatal(err)
	}
	wrong := write("wrong.json", strings.ReplaceAll(string(agg), "0cacdb18b8388002ba24470cd0f16128c3a99f8ae2b241e033368fc6258840a4",
		"aec13abbba560ecd3603610997b8dfb926d57aa0f240cad59fbd99d4d38f79d1"))
	err := run(context.Background(), []string{"import", "--results", wrong, "--instances", fixture.Path("eee/ask-sre_20251123_3f1c2a9e.detailed.jsonl"), "--db", db}, &bytes.Buffer{}, os.Stderr)
	if err == nil || !strings.Contains(err.Error(), "sample_idx 0's question differs from dataset") {
		t.Errorf("files of another dataset's SHA-256: %v", err)
	}
	if runs, _ := tally.Of(s).Runs(context.Background()); len(runs) != 0 {
		t.Errorf("a refused import stored %d runs", len(runs))
	}
}

// An export of more samples than it reads at a time gives each instance
// its own sample's question, and every sample once.
func TestEEEExportOfManySamples(t *testing.T) {
	srv := llmtest.New(llmtest.Text("The answer is 4."))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	const n = 1100 // three of the export's reads
	writeSums(dir, n)
	os.WriteFile(filepath.Join(dir, "run.yaml"), fmt.Appendf(nil, `name: many
dataset: {path: ./questions.jsonl}
agent: {type: openai, model: agent-model, base_url: %q}
conditions: {baseline: {system_prompt: "Answer."}}
evaluators: [{contains: "4"}]
execution: {num_repetitions: 1, max_concurrent: 16}
`, srv.URL), 0o644)
	db := filepath.Join(dir, "assay.db")
	if err := run(context.Background(), []string{"run", "--config", filepath.Join(dir, "run.yaml"), "--db", db, "--quiet"}, io.Discard, io.Discard); err != nil {
		t.Fatalf("assay run: %v", err)
	}
	_, instPath := exportEEE(t, db, lastRun(t, db))
	f, err := os.Open(instPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seen := map[int]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var in struct {
			SampleID string `json:"sample_id"`
			Input    struct {
				Raw string `json:"raw"`
			} `json:"input"`
		}
		if err := json.Unmarshal(sc.Bytes(), &in); err != nil {
			t.Fatal(err)
		}
		i, _ := strconv.Atoi(strings.TrimPrefix(in.SampleID, "q"))
		if want := fmt.Sprintf("What is %d + %d?", i, i); in.Input.Raw != want || seen[i] {
			t.Fatalf("sample %s: %q (seen before: %v), want %q", in.SampleID, in.Input.Raw, seen[i], want)
		}
		seen[i] = true
	}
	if len(seen) != n {
		t.Errorf("%d instances, want %d", len(seen), n)
	}
}

// Files as k-eval 1.1 writes them — output.raw and reasoning_trace in place
// of raw_runs, a reasoning_trace of "" in each run's details, the tool trace
// under answer_attribution — import, with the same figures as the earlier
// shape and each repetition's MCP tool calls kept as its result's.
func TestImportKEval11Files(t *testing.T) {
	dir := t.TempDir()
	aggPath := fixture.Path("eee/ask-sre_20251123_3f1c2a9e.json")
	lines := strings.Split(strings.TrimSpace(string(fixture.Read(t, "eee/ask-sre_20251123_3f1c2a9e.detailed.jsonl"))), "\n")
	var out []string
	for _, line := range lines {
		var in map[string]any
		if err := json.Unmarshal([]byte(line), &in); err != nil {
			t.Fatal(err)
		}
		output := in["output"].(map[string]any)
		runs := output["raw_runs"].([]any)
		in["output"] = map[string]any{"raw": runs[0], "reasoning_trace": "I will look this up."}
		var trace []any
		var traces []any
		for _, rd := range in["run_details"].([]any) {
			run := rd.(map[string]any)
			run["reasoning_trace"] = "I will look this up."
			rep := run["repetition_index"]
			// As k-eval 1.1.2's writer types them: tool_error a bool,
			// duration_ms a float of milliseconds (null for a call that got
			// no answer), tool_input the call's arguments.
			trace = append(trace,
				map[string]any{"repetition_index": rep, "turn_idx": 0, "source": "agent_reasoning", "extracted_value": "I will look this up.",
					"extraction_method": "text_generation", "is_terminal": false},
				map[string]any{"repetition_index": rep, "turn_idx": 1, "source": "mcp_tool", "extracted_value": "the runbook's page",
					"extraction_method": "tool_call", "is_terminal": false, "tool_name": "mcp__graph__search",
					"tool_input": map[string]any{"query": "runbook"}, "tool_error": false, "duration_ms": 269.25},
				map[string]any{"repetition_index": rep, "turn_idx": 1, "source": "mcp_tool", "extracted_value": "",
					"extraction_method": "tool_call", "is_terminal": false, "tool_name": "mcp__graph__fetch",
					"tool_input": map[string]any{"id": 7}, "tool_error": true, "duration_ms": nil},
				map[string]any{"repetition_index": rep, "turn_idx": 2, "source": "agent_reasoning", "extracted_value": run["agent_response"],
					"extraction_method": "text_generation", "is_terminal": true})
			traces = append(traces, map[string]any{"repetition_index": rep, "reasoning_trace": "I will look this up."})
		}
		in["answer_attribution"] = trace
		in["evaluation"].(map[string]any)["details"].(map[string]any)["reasoning_traces"] = traces
		b, _ := json.Marshal(in)
		out = append(out, string(b))
	}
	instPath := filepath.Join(dir, "ask-sre.detailed.jsonl")
	os.WriteFile(instPath, []byte(strings.Join(out, "\n")+"\n"), 0o644)

	before := filepath.Join(dir, "before.db")
	first := importEEE(t, before, aggPath, fixture.Path("eee/ask-sre_20251123_3f1c2a9e.detailed.jsonl"))
	db := filepath.Join(dir, "assay.db")
	got := importEEE(t, db, aggPath, instPath)
	if got["results"] != 12.0 {
		t.Fatalf("import printed %v", got)
	}
	a, _ := loadReport(t, before, int64(first["run_id"].(float64)))
	b, _ := loadReport(t, db, int64(got["run_id"].(float64)))
	sameSummary(t, a.Summary, b.Summary)
	s, err := tally.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	results, _ := s.Results(context.Background(), int64(got["run_id"].(float64)))
	for _, r := range results {
		if len(r.ToolCalls) != 2 || r.ToolCalls[0].Server != "graph" || r.ToolCalls[0].Tool != "search" ||
			r.ToolCalls[0].Result != "the runbook's page" || r.ToolCalls[0].DurationMS != 269.25 || r.ToolCalls[0].IsError ||
			string(r.ToolCalls[0].Arguments) != `{"query":"runbook"}` || r.ToolCalls[0].Thought != "I will look this up." || r.Response == "" {
			t.Errorf("result %s/%d: %q, tool calls %+v", r.Condition, r.Repetition, r.Response, r.ToolCalls)
			continue
		}
		if c := r.ToolCalls[1]; c.Tool != "fetch" || !c.IsError || c.DurationMS != 0 || string(c.Arguments) != `{"id":7}` {
			t.Errorf("result %s/%d: the call that got no answer %+v", r.Condition, r.Repetition, c)
		}
	}
	// Written again in k-eval 1.1's shape, the tool calls are as k-eval wrote them.
	var printed bytes.Buffer
	if err := run(context.Background(), []string{"export", "--run", fmt.Sprint(int64(got["run_id"].(float64))), "--format", "keval",
		"--db", db, "-o", filepath.Join(dir, "again")}, &printed, os.Stderr); err != nil {
		t.Fatal(err)
	}
	again, _ := os.ReadFile(strings.Fields(printed.String())[1])
	var line map[string]any
	json.Unmarshal([]byte(strings.SplitN(string(again), "\n", 2)[0]), &line)
	said := line["answer_attribution"].([]any)[0].(map[string]any)
	run0 := line["run_details"].([]any)[0].(map[string]any)
	if said["source"] != "agent_reasoning" || said["is_terminal"] != false || said["extracted_value"] != "I will look this up." ||
		run0["reasoning_trace"] != "I will look this up." || line["output"].(map[string]any)["reasoning_trace"] != "I will look this up." {
		t.Errorf("what the agent said before its call, written again: %v; run_details[0].reasoning_trace %v", said, run0["reasoning_trace"])
	}
	entry := line["answer_attribution"].([]any)[1].(map[string]any)
	if entry["tool_name"] != "mcp__graph__search" || entry["source"] != "mcp_tool" || entry["extracted_value"] != "the runbook's page" ||
		entry["duration_ms"] != 269.25 || entry["tool_error"] != false || fmt.Sprint(entry["tool_input"]) != "map[query:runbook]" ||
		line["interaction_type"] != "agentic" {
		t.Errorf("the tool call written again: %v (%v)", entry, line["interaction_type"])
	}
	unanswered := line["answer_attribution"].([]any)[2].(map[string]any)
	if d, ok := unanswered["duration_ms"]; !ok || d != nil || unanswered["tool_error"] != true {
		t.Errorf("the call that got no answer written again: %v", unanswered)
	}

	// Written in the official shape, each answer is a transcript — the
	// question, the tool call, its result, the answer — valid against the
	// schema, and read back with its tool calls.
	runID := int64(got["run_id"].(float64))
	offAgg, offInst := exportVersion(t, db, runID, "0.3.0")
	official := validOfficial(t, "0.3.0", offAgg, offInst)
	msgs, _ := official[0]["messages"].([]any)
	if official[0]["interaction_type"] != "agentic" || official[0]["output"] != nil || len(msgs) != 6 ||
		msgs[1].(map[string]any)["content"] != "I will look this up." || msgs[3].(map[string]any)["content"] != nil ||
		msgs[2].(map[string]any)["content"] != "the runbook's page" || msgs[5].(map[string]any)["content"] == nil {
		t.Errorf("an agentic line: %v, output %v, messages %v", official[0]["interaction_type"], official[0]["output"], msgs)
	}
	thrice := filepath.Join(dir, "thrice.db")
	again3 := importEEE(t, thrice, offAgg, offInst)
	c, _ := loadReport(t, thrice, int64(again3["run_id"].(float64)))
	sameSummary(t, b.Summary, c.Summary)
	s3, err := tally.Open(context.Background(), thrice)
	if err != nil {
		t.Fatal(err)
	}
	defer s3.Close()
	results3, _ := s3.Results(context.Background(), int64(again3["run_id"].(float64)))
	for _, r := range results3 {
		if len(r.ToolCalls) != 2 || r.ToolCalls[0].Tool != "search" || r.ToolCalls[0].Thought != "I will look this up." || r.ToolCalls[0].Result != "the runbook's page" || r.Response == "" {
			t.Errorf("read back from the official files: %s/%d: %q, tool calls %+v", r.Condition, r.Repetition, r.Response, r.ToolCalls)
		}
	}
}

// --format keval writes the two files as k-eval 1.1 writes them — named
// NAME_DATE_ID.json and .detailed.jsonl, output.raw and a reasoning trace in
// place of raw_runs, each repetition's tool calls and answer under
// answer_attribution — and they import back to the same report.
func TestExportKEvalFiles(t *testing.T) {
	db, id := finishedRun(t, 3)
	dir := t.TempDir()
	var out bytes.Buffer
	if err := run(context.Background(), []string{"export", "--run", fmt.Sprint(id), "--format", "keval", "--db", db, "-o", dir}, &out, os.Stderr); err != nil {
		t.Fatal(err)
	}
	paths := strings.Fields(out.String())
	if len(paths) != 2 || !strings.HasSuffix(paths[1], ".detailed.jsonl") || strings.TrimSuffix(paths[0], ".json") != strings.TrimSuffix(paths[1], ".detailed.jsonl") ||
		!regexp.MustCompile(`/docs-or-not_\d{8}_[0-9a-f]{8}\.json$`).MatchString(paths[0]) {
		t.Fatalf("export printed %q, want DIR/NAME_DATE_ID.json and DIR/NAME_DATE_ID.detailed.jsonl", out.String())
	}
	// evaluation_id begins with the 8 hex digits that end the files' names, as k-eval's does.
	var agg struct {
		EvaluationID string `json:"evaluation_id"`
	}
	if b, err := os.ReadFile(paths[0]); err != nil || json.Unmarshal(b, &agg) != nil {
		t.Fatalf("the aggregate: %v", err)
	}
	fileID := strings.TrimSuffix(paths[0], ".json")
	fileID = fileID[len(fileID)-8:]
	if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(agg.EvaluationID) || !strings.HasPrefix(agg.EvaluationID, fileID) {
		t.Errorf("evaluation_id %q, want a UUID beginning with the file's id %s", agg.EvaluationID, fileID)
	}
	f, err := os.Open(paths[1])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	lines := 0
	for sc.Scan() {
		lines++
		var in map[string]any
		if err := json.Unmarshal(sc.Bytes(), &in); err != nil {
			t.Fatal(err)
		}
		output := in["output"].(map[string]any)
		trace, _ := in["answer_attribution"].([]any)
		runs := in["run_details"].([]any)
		if _, old := output["raw_runs"]; old || output["raw"] == "" || len(trace) != len(runs) {
			t.Fatalf("line %d: output %v, %d attribution entries for %d runs", lines, output, len(trace), len(runs))
		}
		last := trace[len(trace)-1].(map[string]any)
		if last["source"] != "agent_reasoning" || last["is_terminal"] != true || last["extraction_method"] != "text_generation" {
			t.Errorf("line %d: the last attribution entry %v", lines, last)
		}
		if rt, ok := runs[0].(map[string]any)["reasoning_trace"]; !ok || rt != "" {
			t.Errorf("line %d: run_details[0].reasoning_trace %v", lines, rt)
		}
	}
	if lines != 6 {
		t.Errorf("%d lines, want 3 samples × 2 conditions", lines)
	}
	back := filepath.Join(t.TempDir(), "back.db")
	imported := importEEE(t, back, paths[0], paths[1])
	a, _ := loadReport(t, db, id)
	b, _ := loadReport(t, back, int64(imported["run_id"].(float64)))
	sameSummary(t, a.Summary, b.Summary)
}

// A run one of whose conditions failed on every answer (a dead endpoint, a
// missing key) exports to EEE, in every version, and imports again with
// that condition and its errors.
func TestEEEOfARunWithAWhollyFailedConditionImportsAgain(t *testing.T) {
	srv := llmtest.New(func(req *llmtest.ChatRequest) llmtest.Reply {
		if strings.Contains(req.Messages[0].Content, "dead") {
			return llmtest.Reply{Status: 400, Body: `{"error": {"message": "model not found"}}`}
		}
		return varied()(req)
	})
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	writeSums(dir, 3)
	os.WriteFile(filepath.Join(dir, "run.yaml"), fmt.Appendf(nil, `name: half-dead
dataset: {path: ./questions.jsonl}
agent: {type: openai, model: agent-model, base_url: %q}
judge: {model: judge-model, base_url: %q}
conditions: {alive: {system_prompt: "Answer."}, dead: {system_prompt: "dead"}}
execution: {num_repetitions: 2}
`, srv.URL, srv.URL), 0o644)
	db := filepath.Join(dir, "assay.db")
	err := run(context.Background(), []string{"run", "--config", filepath.Join(dir, "run.yaml"), "--db", db, "--quiet"}, io.Discard, io.Discard)
	if exitCodeOf(err) != 2 {
		t.Fatalf("a run with a dead condition: %v", err)
	}
	id := lastRun(t, db)
	orig, _ := loadReport(t, db, id)
	for _, version := range []string{"0.3.0", "0.2.3", "0.2.1"} {
		t.Run(version, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "eee")
			var printed bytes.Buffer
			if err := run(context.Background(), []string{"export", "--run", fmt.Sprint(id), "--format", "eee", "--eee-version", version, "--db", db, "-o", out}, &printed, os.Stderr); err != nil {
				t.Fatalf("export: %v", err)
			}
			paths := strings.Fields(printed.String())
			if len(paths) != 2 {
				t.Fatalf("export printed %q", printed.String())
			}
			backDB := filepath.Join(t.TempDir(), "back.db")
			got := importEEE(t, backDB, paths[0], paths[1])
			if got["results"] != 12.0 {
				t.Errorf("import printed %v, want 12 results", got)
			}
			back, _ := loadReport(t, backDB, int64(got["run_id"].(float64)))
			if len(back.Summary.Conditions) != 2 {
				t.Fatalf("imported %d conditions, want 2", len(back.Summary.Conditions))
			}
			for i, c := range back.Summary.Conditions {
				if want := orig.Summary.Conditions[i]; c.Name != want.Name || c.Errors != want.Errors || len(c.Metrics) != len(want.Metrics) {
					t.Errorf("condition %s: %d errors, %d metrics; want %s with %d and %d", c.Name, c.Errors, len(c.Metrics), want.Name, want.Errors, len(want.Metrics))
				}
			}
		})
	}
}
