package store_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"assay"
	"assay/store"
)

// BenchmarkSaveResult stores results as a run's workers do: each with a
// rubric judgement of three scores with their reasoning, from 1 and from
// 10 writers at once (the committer batches what arrives together). It
// prints the time and the CPU per result: the store's part of the engine's cost.
func BenchmarkSaveResult(b *testing.B) {
	for _, writers := range []int{1, 10} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			const n = 3000
			ctx := context.Background()
			db := openTestDB(b)
			d := &store.Dataset{Name: "d", Kind: assay.KindQA, SHA256: "bench", Format: "jsonl"}
			if _, err := db.CreateDataset(ctx, d, testSamples(n)); err != nil {
				b.Fatal(err)
			}
			samples, _ := db.Samples(ctx, d.ID, 0, 0)
			run := &store.Run{DatasetID: d.ID, Repetitions: 1, TotalTasks: n,
				Conditions: []assay.Condition{{Name: "baseline"}}}
			if err := db.CreateRun(ctx, run); err != nil {
				b.Fatal(err)
			}
			response := strings.Repeat("The answer explains the mechanism step by step. ", 16)
			reasoning := strings.Repeat("The response states the key facts. ", 8)
			b.ResetTimer()
			start, cpu0 := time.Now(), cpuTime()
			next := make(chan store.Sample)
			var wg sync.WaitGroup
			for range writers {
				wg.Go(func() {
					for s := range next {
						r := &store.Result{RunID: run.ID, SampleRow: s.ID, Condition: "baseline", Repetition: 1, Response: response,
							TokensIn: 420, TokensOut: 210, CostUSD: 0.0006, LatencyMS: 2300, Attempts: 1,
							Judgements: []store.Judgement{{Evaluator: "rubric", Raw: `{"factual_adherence": 4}`, TokensIn: 900, Scores: []store.Score{
								{Metric: "factual_adherence", Value: 4, Reasoning: reasoning},
								{Metric: "completeness", Value: 3, Reasoning: reasoning},
								{Metric: "helpfulness_and_clarity", Value: 5, Reasoning: reasoning}}}}}
						if _, err := db.SaveResult(ctx, r); err != nil {
							b.Error(err)
						}
					}
				})
			}
			for _, s := range samples {
				next <- s
			}
			close(next)
			wg.Wait()
			per, cpu := time.Since(start)/n, (cpuTime()-cpu0)/n
			b.ReportMetric(float64(cpu.Microseconds()), "cpu-µs/result")
			fmt.Printf("store: %d results from %d writers: %s per result, %s of CPU\n", n, writers, per, cpu)
		})
	}
}

// cpuTime is the CPU time the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
