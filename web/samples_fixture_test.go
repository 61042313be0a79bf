package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"assay"
	"assay/config"
	"assay/store"
	"assay/store/ingest"
)

// storedRun is a finished run written straight into the store, with results
// chosen by the test rather than by a model.
type storedRun struct {
	Run     *store.Run
	Dataset *store.Dataset
	Samples map[string]store.Sample // by the dataset's own id
}

// resultFunc makes the result of one task; a zero Result (no response, no error) is left out.
type resultFunc func(s store.Sample, condition string, rep int) store.Result

// storeRun imports a dataset and stores a completed run over it: every
// sample under every condition, reps times, as fill says.
func storeRun(t testing.TB, db *store.DB, name, data string, conditions []string, reps int, fill resultFunc) *storedRun {
	t.Helper()
	ctx := context.Background()
	ds, _, err := ingest.Import(ctx, db, []byte(data), ingest.Options{Filename: name}, name)
	if err != nil {
		t.Fatalf("import %s: %v", name, err)
	}
	cfg := &config.Config{Evaluators: []config.Evaluator{config.EvalRubric}, JudgeRepetitions: 1,
		Judge: config.Judge{Model: "judge-model", Seed: 42}, Agent: config.Agent{Model: "agent-model"}}
	run := &store.Run{Name: "stored " + name, DatasetID: ds.ID, Config: cfg, Repetitions: reps,
		TotalTasks: ds.Samples * len(conditions) * reps}
	for _, c := range conditions {
		run.Conditions = append(run.Conditions, assay.Condition{Name: c, MCPServers: []assay.MCPServer{}})
	}
	if err := db.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	samples, err := db.Samples(ctx, ds.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	sr := &storedRun{Run: run, Dataset: ds, Samples: map[string]store.Sample{}}
	for _, s := range samples {
		sr.Samples[s.SampleID] = s
		for _, c := range conditions {
			for rep := 1; rep <= reps; rep++ {
				res := fill(s, c, rep)
				if res.Response == "" && res.Error == "" {
					continue
				}
				res.RunID, res.SampleRow, res.Condition, res.Repetition = run.ID, s.ID, c, rep
				if _, err := db.SaveResult(ctx, &res); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if err := db.SetRunStatus(ctx, run.ID, store.RunCompleted, ""); err != nil {
		t.Fatal(err)
	}
	return sr
}

// rubric is a rubric judgement with the three k-eval metrics, in their order.
func rubric(factual, complete, helpful float64, claims ...string) store.Judgement {
	reason := func(m string, v float64) string {
		return fmt.Sprintf("The %s reasoning: scored %g because the response matches the reference.", m, v)
	}
	return store.Judgement{Evaluator: "rubric", Raw: fmt.Sprintf(`{"factual_adherence": %g, "completeness": %g}`, factual, complete),
		UnverifiedClaims: claims, TokensIn: 300, TokensOut: 120, CostUSD: 0.0004, LatencyMS: 900,
		Scores: []store.Score{
			{Metric: "factual_adherence", Value: factual, Reasoning: reason("factual_adherence", factual)},
			{Metric: "completeness", Value: complete, Reasoning: reason("completeness", complete)},
			{Metric: "helpfulness_and_clarity", Value: helpful, Reasoning: reason("helpfulness_and_clarity", helpful)},
		}}
}

// answered is a result with a response judged by j.
func answered(response string, j ...store.Judgement) store.Result {
	return store.Result{Response: response, TokensIn: 120, TokensOut: 45, CostUSD: 0.00021, LatencyMS: 1500,
		Attempts: 1, Judgements: j}
}

// jsonl writes one JSON object per line.
func jsonl(rows ...map[string]any) string {
	var b strings.Builder
	for _, r := range rows {
		line, _ := json.Marshal(r)
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.String()
}
