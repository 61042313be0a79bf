package llm

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"assay/runner/llm/llmtest"
)

// BenchmarkRateLimited prints how a provider's rate limit of 20 requests a
// second (20 at once) is met by 200 calls made at once, at 50 ms: with the
// adaptive limit (max_concurrent 100) and with a fixed concurrency of 100.
// The target: within 1.15 × the time the provider's rate allows, fewer than
// 5% of requests answered 429.
func BenchmarkRateLimited(b *testing.B) {
	const calls, rate, burst = 200, 20.0, 20
	ideal := time.Duration(float64(calls-burst) / rate * float64(time.Second))
	for range b.N {
		for _, adaptive := range []bool{true, false} {
			srv := llmtest.New(llmtest.Text("4"), llmtest.WithRateLimit(rate, burst), llmtest.WithLatency(50*time.Millisecond), llmtest.WithoutHistory())
			cfg := Config{BaseURL: srv.URL, Model: "m", Retry: RetryPolicy{MaxAttempts: 100, InitialBackoff: 100 * time.Millisecond, MaxBackoff: 5 * time.Second}}
			if adaptive {
				cfg.Limit = (&Limits{}).For(cfg, 100)
			}
			began := time.Now()
			failed := callAll(New(cfg, nil), calls)
			wall := time.Since(began)
			st := srv.Stats()
			srv.Close()
			name := "adaptive (max_concurrent 100)"
			if !adaptive {
				name = "fixed concurrency 100"
			}
			fmt.Printf("rate limit %.0f/s (%d at once), %d calls at 50 ms, %s: %.2f s = %.2f × the %.1f s its rate allows; %d of %d requests answered 429 (%.1f%%), %d calls failed\n",
				rate, burst, calls, name, wall.Seconds(), wall.Seconds()/ideal.Seconds(), ideal.Seconds(),
				st.Status[http.StatusTooManyRequests], st.Requests, 100*float64(st.Status[http.StatusTooManyRequests])/float64(st.Requests), failed)
			if adaptive {
				b.ReportMetric(wall.Seconds()/ideal.Seconds(), "wall/ideal")
			}
		}
	}
}
