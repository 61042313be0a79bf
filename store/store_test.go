package store_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"assay"
	"assay/internal/pgtest"
	"assay/store"
	"assay/tally"
)

func openTestDB(t testing.TB) *store.DB {
	t.Helper()
	db, err := tally.Open(context.Background(), pgtest.Database(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// countedPairs is what the samples table counts of a run: each sample and
// condition with its results.
func countedPairs(t testing.TB, db *store.DB, runID int64) []tally.SampleCounts {
	t.Helper()
	st, err := tally.Of(db).SampleStats(context.Background(), runID)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]tally.SampleCounts, len(st.Rows))
	for i, r := range st.Rows {
		out[i] = r.SampleCounts
	}
	return out
}

func testSamples(n int) []store.Sample {
	var out []store.Sample
	for i := 1; i <= n; i++ {
		out = append(out, store.Sample{Ordinal: i, SampleID: strings.Repeat("x", i), Input: "q", Reference: "a",
			Choices: []string{"1", "2", "3", "4"}, Metadata: map[string]any{"subject": "geo"}})
	}
	return out
}

func TestDatasetCreateAndDedupe(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t)
	d := &store.Dataset{Name: "mmlu", Kind: assay.KindMCQ, SHA256: "abc", Format: "jsonl", Size: 10}
	created, err := db.CreateDataset(ctx, d, testSamples(3))
	if err != nil || !created {
		t.Fatalf("create: created=%v err=%v", created, err)
	}
	again := &store.Dataset{Name: "other name", Kind: assay.KindMCQ, SHA256: "abc", Format: "jsonl"}
	created, err = db.CreateDataset(ctx, again, testSamples(5))
	if err != nil || created {
		t.Fatalf("re-upload of the same bytes: created=%v err=%v", created, err)
	}
	if again.ID != d.ID || again.Name != "mmlu" || again.Samples != 3 {
		t.Fatalf("re-upload should lead to the existing dataset, got %+v", again)
	}
	list, _ := db.Datasets(ctx)
	if len(list) != 1 {
		t.Fatalf("want 1 dataset, got %d", len(list))
	}
	// The same bytes read another way are another dataset.
	other := &store.Dataset{Name: "mmlu as qa", Kind: assay.KindQA, SHA256: "abc", Format: "jsonl"}
	if created, err := db.CreateDataset(ctx, other, testSamples(5)); err != nil || !created || other.ID == d.ID || other.Samples != 5 {
		t.Fatalf("the same bytes as another kind: created=%v err=%v %+v", created, err, other)
	}
	keyed := &store.Dataset{Name: "mmlu keyed", Kind: assay.KindMCQ, SHA256: "abc", Format: "jsonl", QuestionKey: "prompt"}
	if created, err := db.CreateDataset(ctx, keyed, testSamples(2)); err != nil || !created || keyed.ID == d.ID {
		t.Fatalf("the same bytes with another question key: created=%v err=%v %+v", created, err, keyed)
	}
	samples, err := db.Samples(ctx, d.ID, 1, 10)
	if err != nil || len(samples) != 2 || samples[0].Ordinal != 2 {
		t.Fatalf("page of samples: %v %+v", err, samples)
	}
	if samples[0].Choices[3] != "4" || samples[0].Metadata["subject"] != "geo" {
		t.Fatalf("choices and metadata round trip: %+v", samples[0])
	}
}

func TestDatasetNothingHalfStored(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t)
	samples := testSamples(3)
	samples[2].SampleID = samples[0].SampleID // duplicate id fails on the third insert
	_, err := db.CreateDataset(ctx, &store.Dataset{Name: "bad", Kind: assay.KindQA, SHA256: "def", Format: "jsonl"}, samples)
	if err == nil {
		t.Fatal("want an error for duplicate sample ids")
	}
	if list, _ := db.Datasets(ctx); len(list) != 0 {
		t.Fatalf("a failed import must leave no dataset, found %d", len(list))
	}
}

func TestConditionLifecycle(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t)
	c := &assay.Condition{Name: "with-graph", SystemPrompt: "Use the graph.\nBe brief.", RequireMCPToolUse: true,
		MCPServers: []assay.MCPServer{
			{Name: "graph", Transport: assay.TransportStdio, Command: "python", Args: []string{"-m", "graph"}, Env: map[string]string{"TOKEN": "${GRAPH_TOKEN}"}},
			{Name: "search", Transport: assay.TransportSSE, URL: "http://localhost:8080/sse", Headers: map[string]string{"Authorization": "Bearer ${KEY}"}},
		}}
	if err := db.CreateCondition(ctx, c); err != nil {
		t.Fatal(err)
	}
	got, err := db.Condition(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.MCPServers) != 2 || got.MCPServers[0].Env["TOKEN"] != "${GRAPH_TOKEN}" || got.MCPServers[1].Headers["Authorization"] != "Bearer ${KEY}" {
		t.Fatalf("servers must round trip with ${ENV} unresolved: %+v", got.MCPServers)
	}
	dup := &assay.Condition{Name: "with-graph"}
	if err := db.CreateCondition(ctx, dup); assay.ErrorCode(err) != assay.ECONFLICT {
		t.Fatalf("duplicate name: want conflict, got %v", err)
	}
	got.MCPServers = got.MCPServers[:1]
	got.SystemPrompt = "changed"
	if err := db.UpdateCondition(ctx, got); err != nil {
		t.Fatal(err)
	}
	again, _ := db.Condition(ctx, c.ID)
	if again.SystemPrompt != "changed" || len(again.MCPServers) != 1 {
		t.Fatalf("update did not apply: %+v", again)
	}
	if err := db.DeleteCondition(ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Condition(ctx, c.ID); !errors.Is(err, assay.ErrNotFound) {
		t.Fatalf("after delete want not found, got %v", err)
	}
}

func TestConditionValidation(t *testing.T) {
	cases := []struct {
		name string
		c    assay.Condition
		want string
	}{
		{"empty name", assay.Condition{}, "name: required"},
		{"not a slug", assay.Condition{Name: "With Graph"}, "name:"},
		{"stdio without command", assay.Condition{Name: "a", MCPServers: []assay.MCPServer{{Name: "s", Transport: "stdio"}}}, "MCP server 1: command"},
		{"bad url", assay.Condition{Name: "a", MCPServers: []assay.MCPServer{{Name: "s", Transport: "http", URL: "ftp://x"}}}, "url:"},
		{"bad transport", assay.Condition{Name: "a", MCPServers: []assay.MCPServer{{Name: "s", Transport: "ws"}}}, "transport:"},
		{"guard without servers", assay.Condition{Name: "a", RequireMCPToolUse: true}, "require_mcp_tool_use"},
		{"duplicate server", assay.Condition{Name: "a", MCPServers: []assay.MCPServer{{Name: "s", Transport: "stdio", Command: "x"}, {Name: "s", Transport: "stdio", Command: "y"}}}, "used twice"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.c.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) || assay.ErrorCode(err) != assay.EINVALID {
				t.Fatalf("want invalid error containing %q, got %v", tc.want, err)
			}
		})
	}
}

func TestReopenKeepsDataAndMigratesOnce(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "assay.db")
	db, err := tally.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.CreateCondition(ctx, &assay.Condition{Name: "baseline"}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db, err = tally.Open(ctx, path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer db.Close()
	if list, _ := db.Conditions(ctx); len(list) != 1 {
		t.Fatalf("want the condition after reopening, got %d", len(list))
	}
}

func TestShareLinks(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t)
	d := &store.Dataset{Name: "d", Kind: assay.KindQA, SHA256: "s", Format: "jsonl"}
	db.CreateDataset(ctx, d, testSamples(1))
	run := &store.Run{DatasetID: d.ID, Repetitions: 1, TotalTasks: 1}
	if err := db.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	a, err := db.CreateShare(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := db.CreateShare(ctx, run.ID)
	if len(a.Token) < 43 || a.Token == b.Token {
		t.Fatalf("tokens must be long and distinct: %q %q", a.Token, b.Token)
	}
	if id, err := db.SharedRun(ctx, a.Token); err != nil || id != run.ID {
		t.Fatalf("shared run: %d %v", id, err)
	}
	if err := db.RevokeShare(ctx, run.ID, a.Token); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SharedRun(ctx, a.Token); !errors.Is(err, assay.ErrNotFound) {
		t.Fatalf("a revoked link must lead nowhere, got %v", err)
	}
	if _, err := db.SharedRun(ctx, b.Token); err != nil {
		t.Fatalf("revoking one link keeps the other: %v", err)
	}
	if list, _ := db.Shares(ctx, run.ID); len(list) != 2 || list[0].RevokedAt == nil && list[1].RevokedAt == nil {
		t.Fatalf("shares %+v", list)
	}
}

func TestErrorKeepsItsCauseApartFromItsMessage(t *testing.T) {
	cause := fmt.Errorf("read /secret/path: %w", os.ErrPermission)
	err := fmt.Errorf("load: %w", assay.Wrapf(assay.EINVALID, cause, "The file cannot be read."))
	if assay.ErrorMessage(err) != "The file cannot be read." || assay.ErrorCode(err) != assay.EINVALID {
		t.Errorf("safe message %q, code %q", assay.ErrorMessage(err), assay.ErrorCode(err))
	}
	if !errors.Is(err, os.ErrPermission) || !strings.Contains(err.Error(), "/secret/path") {
		t.Errorf("the cause is lost: %v", err)
	}
}

// The ids SaveResult gives a result's scores are those they are stored
// under, score by score, when results of several judgements and judges
// are saved at once and share a transaction; a result's judgements and
// scores take them in the order they are given.
func TestSavedScoresKnowTheirIDs(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t)
	d := &store.Dataset{Name: "d", Kind: assay.KindQA, SHA256: "ids", Format: "jsonl"}
	if _, err := db.CreateDataset(ctx, d, testSamples(24)); err != nil {
		t.Fatal(err)
	}
	samples, _ := db.Samples(ctx, d.ID, 0, 0)
	run := &store.Run{DatasetID: d.ID, Repetitions: 1, TotalTasks: len(samples), Conditions: []assay.Condition{{Name: "c"}}}
	if err := db.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	saved := make([]*store.Result, len(samples))
	var wg sync.WaitGroup
	for i, s := range samples {
		scores := func(metrics ...string) []store.Score {
			var out []store.Score
			for k, m := range metrics {
				out = append(out, store.Score{Metric: m, Value: float64((i+k)%5 + 1), Reasoning: fmt.Sprintf("%s of %s", m, s.SampleID)})
			}
			return out
		}
		saved[i] = &store.Result{RunID: run.ID, SampleRow: s.ID, Condition: "c", Repetition: 1, Response: "r", Judgements: []store.Judgement{
			{Evaluator: "rubric", Scores: scores("factual_adherence", "completeness", "helpfulness_and_clarity")},
			{Evaluator: "rubric", JudgeIndex: 1, Judge: "second", Scores: scores("factual_adherence", "completeness", "helpfulness_and_clarity")},
			{Evaluator: "exact_match", Scores: scores("exact_match")}}}
		wg.Go(func() {
			if _, err := db.SaveResult(ctx, saved[i]); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	stored, err := db.Results(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[int64]store.Score{}
	for _, r := range stored {
		for _, j := range r.Judgements {
			for _, s := range j.Scores {
				byID[s.ID] = s
			}
		}
	}
	if len(byID) != 7*len(samples) {
		t.Fatalf("%d scores stored, want %d", len(byID), 7*len(samples))
	}
	for _, r := range saved {
		var lastJudgement, lastScore int64
		for _, j := range r.Judgements {
			if j.ID <= lastJudgement {
				t.Errorf("result %d: judgement %d after %d: a result's parts take ids in their order, which a rebuild adds them in", r.ID, j.ID, lastJudgement)
			}
			lastJudgement = j.ID
			for _, s := range j.Scores {
				if got, ok := byID[s.ID]; !ok || got.Metric != s.Metric || got.Reasoning != s.Reasoning || got.Value != s.Value {
					t.Errorf("score %d (%s, %q) is stored as %+v", s.ID, s.Metric, s.Reasoning, got)
				}
				if s.ID <= lastScore {
					t.Errorf("result %d: score %d after %d: a result's parts take ids in their order", r.ID, s.ID, lastScore)
				}
				lastScore = s.ID
			}
		}
	}
}
