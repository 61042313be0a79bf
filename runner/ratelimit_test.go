package runner_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"assay/runner/llm/llmtest"
	"assay/store"
)

// A run at max_concurrent 40 against a provider taking 100 requests a
// second (10 at once): its calls adapt, so that few meet a 429 and every
// task ends well; the 429s are counted by condition, and a run that turns
// the adaptive limit off meets the storm.
func TestRunAdaptsToTheProvidersRateLimit(t *testing.T) {
	run := func(adaptive string) (tooMany, requests int, limited map[string]int64) {
		f := newFixture(t, rubricJudge(), llmtest.WithRateLimit(100, 10), llmtest.WithLatency(2*time.Millisecond))
		cfg := f.config(f.qaDataset(10), "")
		cfg.Execution.MaxConcurrent = 40
		cfg.Execution.Retry.MaxAttempts = 60
		if adaptive == "off" {
			cfg.Execution.Retry.MaxAttempts = 4 // enough to show the storm
			off := false
			cfg.Execution.Adaptive = &off
		}
		r := f.launch(cfg)
		status, err := f.m.Execute(context.Background(), r.ID)
		if err != nil || status != store.RunCompleted && adaptive == "on" {
			t.Fatalf("adaptive %s: status %s, err %v", adaptive, status, err)
		}
		results, _ := f.db.Results(context.Background(), r.ID)
		for _, res := range results {
			if res.Error != "" && adaptive == "on" { // off, the retries (not waited for here) run out
				t.Fatalf("adaptive %s: a task failed: %s", adaptive, res.Error)
			}
		}
		st := f.srv.Stats()
		return st.Status[http.StatusTooManyRequests], st.Requests, f.m.RateLimited(r.ID)
	}
	tooMany, requests, limited := run("on")
	if share := float64(tooMany) / float64(requests); share >= 0.05 {
		t.Errorf("adaptive: %d of %d requests met a 429 (%.1f%%), want under 5%%", tooMany, requests, 100*share)
	}
	if got := limited["baseline"] + limited["careful"]; got != int64(tooMany) || len(limited) != 2 {
		t.Errorf("429s counted by condition %v, the server sent %d", limited, tooMany)
	}
	offTooMany, offRequests, offLimited := run("off")
	if offTooMany < offRequests/3 {
		t.Errorf("fixed concurrency: %d of %d requests met a 429; the storm should show", offTooMany, offRequests)
	}
	if got := offLimited["baseline"] + offLimited["careful"]; got != int64(offTooMany) {
		t.Errorf("429s counted by condition %v, the server sent %d", offLimited, offTooMany)
	}
	t.Logf("429s: adaptive %d of %d requests, fixed %d of %d", tooMany, requests, offTooMany, offRequests)
}
