package runner_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"assay/runner"
	"assay/runner/config"
	"assay/runner/llm/llmtest"
	"assay/store"
)

// BenchmarkRun runs 1,000 samples × 1 condition × 1 repetition with the rubric
// judge against the fake server, at 0 ms and 50 ms latency, concurrency 10.
// CPU time and peak memory are the whole process's, the fake server's included.
func BenchmarkRun(b *testing.B) {
	for _, latency := range []time.Duration{0, 50 * time.Millisecond} {
		b.Run(fmt.Sprintf("latency=%s", latency), func(b *testing.B) {
			for range b.N {
				benchOnce(b, latency)
			}
		})
	}
}

func benchOnce(b *testing.B, latency time.Duration) {
	dir := b.TempDir()
	db, err := store.Open(context.Background(), filepath.Join(dir, "assay.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	srv := llmtest.New(rubricJudge(), llmtest.WithLatency(latency))
	defer srv.Close()
	var data strings.Builder
	for i := 1; i <= 1000; i++ {
		fmt.Fprintf(&data, "{\"question\": \"What is %d + %d?\", \"answer\": \"%d\"}\n", i, i, 2*i)
	}
	path := filepath.Join(dir, "qa.jsonl")
	os.WriteFile(path, []byte(data.String()), 0o644)
	yaml := fmt.Sprintf(`dataset: {path: %q}
agent: {type: openai, model: m, base_url: %q}
judge: {model: j, base_url: %q}
conditions: {baseline: {system_prompt: "Answer."}}
execution: {num_repetitions: 1, max_concurrent: 10}
`, path, srv.URL, srv.URL)
	cfg, err := config.Parse([]byte(yaml), "bench.yaml", dir, func(string) string { return "" })
	if err != nil {
		b.Fatal(err)
	}
	m := runner.New(db, runner.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	defer m.Close(context.Background())
	run, err := m.CreateFromConfig(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	resetPeakRSS()
	cpu0, start := cpuTime(), time.Now()
	status, err := m.Execute(context.Background(), run.ID)
	wall, cpu := time.Since(start), cpuTime()-cpu0
	if err != nil || status != store.RunCompleted {
		b.Fatalf("status %s, err %v", status, err)
	}
	calls := srv.Stats().Requests
	ideal := time.Duration(calls) * latency / 10
	ratio := 0.0
	if ideal > 0 {
		ratio = float64(wall) / float64(ideal)
	}
	b.ReportMetric(wall.Seconds(), "wall-s")
	b.ReportMetric(cpu.Seconds(), "cpu-s")
	b.ReportMetric(float64(peakRSS())/(1<<20), "peak-MiB")
	fmt.Printf("run 1000 samples, latency %s: %d calls, wall %.2fs, cpu %.2fs, peak RSS %.0f MiB, wall/ideal %.3f (ideal %.2fs)\n",
		latency, calls, wall.Seconds(), cpu.Seconds(), float64(peakRSS())/(1<<20), ratio, ideal.Seconds())
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// peakRSS reads the process's peak resident set (VmHWM) in bytes.
func peakRSS() int64 {
	data, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// resetPeakRSS starts a new peak measurement where the kernel allows it.
func resetPeakRSS() { os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }
