package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"assay/runner/llm/llmtest"
)

// assay run --json counts, per condition, the calls the provider answered
// 429; every condition has the key, 0 included, and the text summary says
// so where there were some.
func TestRunCountsRateLimitedCallsPerCondition(t *testing.T) {
	var calls atomic.Int64
	srv := llmtest.New(func(req *llmtest.ChatRequest) llmtest.Reply {
		if strings.Contains(req.Messages[0].Content, "Be brief") && calls.Add(1) <= 3 {
			return llmtest.Reply{Status: http.StatusTooManyRequests, RetryAfter: "0", Content: "Rate limit reached"}
		}
		return llmtest.Reply{Content: "The answer is A."}
	})
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	var data strings.Builder
	for i := 1; i <= 4; i++ {
		fmt.Fprintf(&data, "{\"question\": \"Q%d: which?\", \"choices\": [\"a\", \"b\", \"c\", \"d\"], \"answer\": \"A\"}\n", i)
	}
	os.WriteFile(filepath.Join(dir, "mmlu.jsonl"), []byte(data.String()), 0o644)
	os.WriteFile(filepath.Join(dir, "run.yaml"), fmt.Appendf(nil, `name: limited
dataset: {path: ./mmlu.jsonl}
agent: {type: openai, model: m, base_url: %q}
conditions: {brief: {system_prompt: "Be brief."}, plain: {}}
evaluators: [exact_match]
execution: {num_repetitions: 1, max_concurrent: 2, retry: {max_attempts: 5, initial_backoff_seconds: 0.01}}
`, srv.URL), 0o644)
	args := []string{"run", "--config", filepath.Join(dir, "run.yaml")}
	var out bytes.Buffer
	if err := run(context.Background(), append(args, "--db", filepath.Join(dir, "a.db"), "--json"), &out, io.Discard); err != nil {
		t.Fatalf("assay run: %v", err)
	}
	var sum struct {
		Conditions []struct {
			Name        string `json:"name"`
			Errors      int    `json:"errors"`
			RateLimited *int   `json:"rate_limited"`
		}
	}
	if err := json.Unmarshal(out.Bytes(), &sum); err != nil || len(sum.Conditions) != 2 {
		t.Fatalf("%v: %s", err, out.String())
	}
	got := map[string]int{}
	for _, c := range sum.Conditions {
		if c.RateLimited == nil {
			t.Fatalf("condition %s has no rate_limited: %s", c.Name, out.String())
		}
		if c.Errors != 0 {
			t.Errorf("condition %s: %d errors; the 429s were retried", c.Name, c.Errors)
		}
		got[c.Name] = *c.RateLimited
	}
	if got["brief"] != 3 || got["plain"] != 0 {
		t.Errorf("rate_limited %v, want brief 3 and plain 0", got)
	}
	calls.Store(0)
	out.Reset()
	if err := run(context.Background(), append(args, "--db", filepath.Join(dir, "b.db")), &out, io.Discard); err != nil {
		t.Fatalf("assay run: %v", err)
	}
	if !strings.Contains(out.String(), "brief: 3 calls answered 429 (rate limited) by the provider") || strings.Contains(out.String(), "plain: 0 calls") {
		t.Errorf("the summary says nothing right of the 429s:\n%s", out.String())
	}
}
