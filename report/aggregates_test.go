package report_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"assay"
	"assay/config"
	"assay/report"
	"assay/store"
	"assay/tally"
)

// updateGolden rewrites the summaries the test holds from those kept as
// results commit, after a change to a statistic: the test then checks the
// summaries computed when a database is opened against them.
var updateGolden = flag.Bool("update", false, "rewrite testdata/summaries_before_aggregates.json")

// TestSummariesBeforeAndAfterAggregates stores the fixture runs, whose
// summaries testdata/summaries_before_aggregates.json holds as the report
// computed them before it read aggregates (from every result, judgement and
// score), and checks that the summaries read from the aggregates are the
// same to the last digit: as kept result by result, and as computed again
// when a database stored before aggregates is opened.
func TestSummariesBeforeAndAfterAggregates(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("testdata", "summaries_before_aggregates.json"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "assay.db")
	db, err := tally.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	var before any
	if err := json.Unmarshal(want, &before); err != nil {
		t.Fatal(err)
	}
	compare := func(when string, summaries map[string]any) {
		t.Helper()
		var after any
		b, _ := json.Marshal(summaries)
		if err := json.Unmarshal(b, &after); err != nil {
			t.Fatal(err)
		}
		for _, d := range differences("", after, before) {
			t.Errorf("%s: %s", when, d)
		}
	}
	kept := storeFixtureRuns(t, db)
	if *updateGolden {
		b, _ := json.MarshalIndent(kept, "", "  ")
		if err := os.WriteFile(filepath.Join("testdata", "summaries_before_aggregates.json"), append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &before); err != nil {
			t.Fatal(err)
		}
	}
	compare("kept as results commit", kept)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	// A database stored before aggregates: the same rows without them.
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`DELETE FROM sample_scores`, `DELETE FROM sample_sums`, `DELETE FROM condition_totals`,
		`INSERT INTO aggregates_pending (run_id) SELECT id FROM runs`} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	raw.Close()
	db, err = tally.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	summaries := map[string]any{}
	for _, id := range []int64{1, 2, 3} {
		s, err := report.Summarize(ctx, db, id)
		if err != nil {
			t.Fatal(err)
		}
		summaries[fmt.Sprint(id)] = s
	}
	compare("computed when the database is opened", summaries)
}

// differences lists where two decoded JSON values differ. A cost, summed
// result by result as they commit where it was summed condition by
// condition, may differ in its last bit; every other value must be the same.
func differences(path string, got, want any) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok || len(g) != len(w) {
			return []string{fmt.Sprintf("%s: got %v, want %v", path, got, want)}
		}
		var out []string
		for k := range w {
			out = append(out, differences(path+"."+k, g[k], w[k])...)
		}
		return out
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return []string{fmt.Sprintf("%s: got %v, want %v", path, got, want)}
		}
		var out []string
		for i := range w {
			out = append(out, differences(fmt.Sprintf("%s[%d]", path, i), g[i], w[i])...)
		}
		return out
	case float64:
		g, ok := got.(float64)
		if ok && (g == w || strings.HasSuffix(path, ".cost_usd") && math.Abs(g-w) <= 1e-12*math.Abs(w)) {
			return nil
		}
	default:
		if reflect.DeepEqual(got, want) {
			return nil
		}
	}
	return []string{fmt.Sprintf("%s: got %v, want %v", path, got, want)}
}

// storeFixtureRuns stores three runs of 30 samples × 3 conditions × 3
// repetitions, tasks in shuffled order: a two-judge panel combined by
// median, the same by mean, and one judge; two judge repetitions, a rubric
// of two metrics, exact match and a similarity of any float; agent errors,
// judge errors, claims, retries and tool calls. It returns each run's
// summary, by run id. The same code gives the same rows, ids included.
func storeFixtureRuns(t *testing.T, db *store.DB) map[string]any {
	t.Helper()
	ctx := context.Background()
	var samples []store.Sample
	for i := 1; i <= 30; i++ {
		samples = append(samples, store.Sample{Ordinal: i, SampleID: fmt.Sprintf("q%02d", i), Input: fmt.Sprintf("Question %d?", i),
			Reference: "42", Metadata: map[string]any{"subject": []string{"algebra", "biology", "chemistry"}[i%3]}})
	}
	ds := &store.Dataset{Name: "before aggregates", Kind: assay.KindQA, SHA256: "aggregates-fixture", Format: "jsonl",
		Filename: "fixture.jsonl", Samples: len(samples)}
	if _, err := db.CreateDataset(ctx, ds, samples); err != nil {
		t.Fatal(err)
	}
	rows, _ := db.Samples(ctx, ds.ID, 0, 0)
	summaries := map[string]any{}
	for k, mode := range []string{config.PanelMedian, config.PanelMean, ""} {
		cfg := config.Config{Name: "fixture " + mode, Agent: config.Agent{Type: config.AgentOpenAI, Model: "agent-model",
			BaseURL: "https://llm.example/v1", APIKeyEnv: "AGENT_KEY"},
			Judge:           config.Judge{Name: "strict", Model: "judge-a", BaseURL: "https://llm.example/v1", APIKeyEnv: "JUDGE_KEY", Seed: 42},
			JudgeSampleRate: 1, JudgeRepetitions: 2, Report: config.ReportSettings{SliceBy: "subject"},
			Evaluators: []config.Evaluator{config.EvalRubric, config.EvalExactMatch}}
		judges := 1
		if mode != "" {
			cfg.Judges = []config.Judge{cfg.Judge, {Name: "lenient", Model: "judge-b", BaseURL: "https://llm.example/v1",
				APIKeyEnv: "JUDGE_KEY", Seed: 42}}
			cfg.PanelMode = mode
			judges = 2
		}
		conds := []string{"baseline", "with-docs", "with-tools"}
		run := &store.Run{Name: cfg.Name, DatasetID: ds.ID, Config: &cfg, Repetitions: 3, TotalTasks: 3 * 3 * len(rows)}
		for _, c := range conds {
			run.Conditions = append(run.Conditions, assay.Condition{Name: c})
		}
		if err := db.CreateRun(ctx, run); err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(uint64(k+1), 7))
		// Tasks are stored out of order, as concurrent workers finish them.
		type task struct {
			s   store.Sample
			c   string
			rep int
		}
		var tasks []task
		for _, s := range rows {
			for _, c := range conds {
				for rep := 1; rep <= 3; rep++ {
					tasks = append(tasks, task{s, c, rep})
				}
			}
		}
		rng.Shuffle(len(tasks), func(i, j int) { tasks[i], tasks[j] = tasks[j], tasks[i] })
		for _, tk := range tasks {
			r := &store.Result{RunID: run.ID, SampleRow: tk.s.ID, Condition: tk.c, Repetition: tk.rep, Response: "answer",
				Model: "agent-model", TokensIn: 50 + rng.IntN(100), TokensOut: rng.IntN(60), CostUSD: rng.Float64() / 300,
				LatencyMS: int64(100 + rng.IntN(900)), Attempts: 1}
			if rng.IntN(6) == 0 {
				r.Attempts, r.Retries = 2, []string{"attempt 1: status 429; retrying in 1s"}
			}
			if tk.c == "with-tools" {
				r.ToolCalls = []store.ToolCall{{Turn: 1, Server: "docs", Tool: "search", Result: "found"},
					{Turn: 2, Server: "docs", Tool: "read", IsError: rng.IntN(3) == 0}}
			}
			if rng.IntN(12) == 0 {
				r.Error, r.ErrorKind, r.Response = "agent: status 500", store.ErrorServer, ""
			} else {
				base := float64(tk.s.Ordinal%5) + 1
				if tk.c == "with-docs" {
					base = min(5, base+1)
				}
				for j := range judges {
					for jr := range 2 {
						jd := store.Judgement{Evaluator: "rubric", Judge: cfg.Judge.Name, JudgeIndex: j, JudgeRepetition: jr,
							TokensIn: 300, TokensOut: 40, CostUSD: rng.Float64() / 1000}
						if judges > 1 {
							jd.Judge = cfg.Judges[j].Name
						}
						if rng.IntN(20) == 0 {
							jd.Error, jd.ErrorKind = "judge: malformed JSON", store.ErrorBadResponse
						} else {
							if rng.IntN(4) == 0 {
								jd.UnverifiedClaims = []string{"a claim", "another"}
							}
							fa := min(5, max(1, base+float64(rng.IntN(3)-1)-float64(j)))
							jd.Scores = []store.Score{{Metric: "factual_adherence", Value: fa, Reasoning: "why"},
								{Metric: "completeness", Value: float64(1 + rng.IntN(5)), Reasoning: "why"}}
						}
						r.Judgements = append(r.Judgements, jd)
					}
				}
				r.Judgements = append(r.Judgements, store.Judgement{Evaluator: "exact_match",
					Scores: []store.Score{{Metric: "exact_match", Value: float64(rng.IntN(2))}}},
					store.Judgement{Evaluator: "similarity", Scores: []store.Score{{Metric: "similarity", Value: rng.Float64()}}})
			}
			if _, err := db.SaveResult(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.SetRunStatus(ctx, run.ID, store.RunRunning, ""); err != nil {
			t.Fatal(err)
		}
		if err := db.SetRunStatus(ctx, run.ID, store.RunCompleted, ""); err != nil {
			t.Fatal(err)
		}
		s, err := report.Summarize(ctx, db, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		summaries[fmt.Sprint(run.ID)] = s
	}
	return summaries
}
