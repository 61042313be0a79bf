package web_test

import (
	"context"
	"fmt"
	"testing"

	"assay"
	"assay/config"
	"assay/store"
)

// The hand-checked run: five samples, two conditions, two repetitions.
// factual_adherence (rubric, 1–5) and exact_match (pass/fail) per repetition;
// nil marks an agent error. Under baseline the per-sample means of
// factual_adherence are 3, 3, 5, 2 (s5 failed twice): mean 3.25, std 1.258,
// stderr 0.629, 95% CI 3.25 ± 3.182 × 0.629 = [1.248, 5.252], n 8, spread
// (0 + 1.414 + 0 + 0) / 4 = 0.354. Under with-docs they are 4, 4, 4, 2, 1:
// mean 3.0, n 10. Paired on s1–s4, with-docs − baseline is 1, 1, −1, 0: mean
// +0.25, 2 better, 1 tie, 1 worse.
var handRun = map[string][][2][]float64{
	//             factual_adherence per rep, exact_match per rep
	"baseline": {
		{{3, 3}, {1, 0}},
		{{4, 2}, {0, 0}},
		{{5, 5}, {1, 1}},
		{{2, 2}, {0, 1}},
		{nil, nil},
	},
	"with-docs": {
		{{4, 4}, {1, 1}},
		{{4, 4}, {1, 0}},
		{{5, 3}, {1, 1}},
		{{2, 2}, {0, 0}},
		{{1, 1}, {0, 0}},
	},
}

// Text that must show as text wherever a report shows it.
const (
	xssScript = `<script>alert("x")</script>`
	xssImg    = `<img src=x onerror=alert(1)>`
	xssLink   = `[click me](javascript:alert(1))`
)

// Names that must never reach a shared page or an export.
const (
	agentKeyEnv = "AGENT_KEY_VARIABLE"
	judgeKeyEnv = "JUDGE_KEY_VARIABLE"
	urlSecret   = "hunter2"
)

// handRunIn stores the hand-checked run and returns its id and the row ids of its samples.
func handRunIn(t *testing.T, db *store.DB, status store.RunStatus) (int64, []int64) {
	t.Helper()
	return storeScoredRun(t, db, status, "feedc0de", handRun)
}

// storeScoredRun stores a run of the table's scores on the dataset of that SHA-256
// (made on first use) and returns its id and the row ids of its samples.
func storeScoredRun(t *testing.T, db *store.DB, status store.RunStatus, sha string, table map[string][][2][]float64) (int64, []int64) {
	t.Helper()
	ctx := context.Background()
	var samples []store.Sample
	for i := 1; i <= 5; i++ {
		samples = append(samples, store.Sample{Ordinal: i, SampleID: fmt.Sprintf("s%d", i),
			Input: fmt.Sprintf("Question %d?", i), Reference: "42"})
	}
	samples[0].SampleID, samples[0].Input = "s1"+xssImg, "What is 6×7? "+xssScript+" "+xssLink
	ds := &store.Dataset{Name: "golden " + xssImg, Kind: assay.KindQA, SHA256: sha,
		Format: "jsonl", Filename: "golden.jsonl", Samples: len(samples)}
	if _, err := db.CreateDataset(ctx, ds, samples); err != nil {
		t.Fatal(err)
	}
	rows, _ := db.Samples(ctx, ds.ID, 0, 0)
	cfg := config.Config{Name: "hand", Agent: config.Agent{Type: config.AgentOpenAI, Model: "agent " + xssScript,
		BaseURL: "https://user:" + urlSecret + "@llm.example/v1", APIKeyEnv: agentKeyEnv},
		Judge:           config.Judge{Model: "judge-model", BaseURL: "https://llm.example/v1", APIKeyEnv: judgeKeyEnv, Seed: 42},
		JudgeSampleRate: 1, JudgeRepetitions: 1,
		Evaluators: []config.Evaluator{config.EvalRubric, config.EvalExactMatch}}
	run := &store.Run{Name: "hand run " + xssScript, DatasetID: ds.ID, Config: &cfg, Repetitions: 2, TotalTasks: 20,
		Conditions: []assay.Condition{{Name: "baseline"}, {Name: "with-docs"}}}
	if err := db.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"baseline", "with-docs"} {
		for i, spec := range table[c] {
			for rep := range 2 {
				saveHandResult(t, db, run.ID, rows[i].ID, c, rep+1, spec)
			}
		}
	}
	if err := db.SetRunStatus(ctx, run.ID, store.RunRunning, ""); err != nil {
		t.Fatal(err)
	}
	if status != store.RunRunning {
		if err := db.SetRunStatus(ctx, run.ID, status, ""); err != nil {
			t.Fatal(err)
		}
	}
	ids := make([]int64, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	return run.ID, ids
}

func saveHandResult(t *testing.T, db *store.DB, runID, sampleID int64, condition string, rep int, spec [2][]float64) {
	t.Helper()
	r := &store.Result{RunID: runID, SampleRow: sampleID, Condition: condition, Repetition: rep, Attempts: 1,
		Response: "The answer is 42. " + xssScript, TokensIn: 100, TokensOut: 20, CostUSD: 0.001, LatencyMS: 400}
	if spec[0] == nil {
		r.Error, r.Response = "agent: "+xssImg, ""
	} else {
		r.Judgements = []store.Judgement{
			{Evaluator: "rubric", TokensIn: 50, TokensOut: 10, CostUSD: 0.0005, UnverifiedClaims: []string{"claim " + xssImg},
				Raw: `{"factual_adherence": 4}`, Scores: []store.Score{{Metric: "factual_adherence", Value: spec[0][rep-1],
					Reasoning: "because " + xssScript}}},
			{Evaluator: "exact_match", Scores: []store.Score{{Metric: "exact_match", Value: spec[1][rep-1]}}},
		}
	}
	if _, err := db.SaveResult(context.Background(), r); err != nil {
		t.Fatal(err)
	}
}
