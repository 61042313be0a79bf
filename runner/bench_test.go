package runner_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"assay/config"
	"assay/internal/pgtest"
	"assay/runner"
	"assay/runner/llm"
	"assay/runner/llm/llmtest"
	"assay/store"
	"assay/tally"
)

// fakeServerEnv, set to a latency, makes the test binary a fake LLM server
// (see TestMain): the engine's benchmarks run it in a process of its own,
// so that the CPU and memory they print are the engine's alone.
const fakeServerEnv = "ASSAY_FAKE_LLM_LATENCY"

func TestMain(m *testing.M) {
	if latency := os.Getenv(fakeServerEnv); latency != "" {
		serveFake(latency)
		return
	}
	os.Exit(pgtest.Main(m))
}

// serveFake serves the rubric judge and the agent until its standard input
// closes, printing its URL first and its request count last.
func serveFake(latency string) {
	d, err := time.ParseDuration(latency)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	srv := llmtest.New(rubricJudge(), llmtest.WithLatency(d), llmtest.WithoutHistory())
	fmt.Println(srv.URL)
	_, _ = io.Copy(io.Discard, os.Stdin)
	fmt.Println(srv.Stats().Requests)
	srv.Close()
}

// fakeProcess is a fake server running in a child process.
type fakeProcess struct {
	URL   string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Scanner
}

func startFake(b *testing.B, latency time.Duration) *fakeProcess {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), fakeServerEnv+"="+latency.String())
	cmd.Stderr = os.Stderr
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	f := &fakeProcess{cmd: cmd, stdin: stdin, out: bufio.NewScanner(stdout)}
	if !f.out.Scan() {
		b.Fatal("the fake server printed no URL")
	}
	f.URL = f.out.Text()
	return f
}

// stop ends the fake server and returns how many requests it answered
// and the CPU time it used: the machine's two cores are shared with it.
func (f *fakeProcess) stop(b *testing.B) (int, time.Duration) {
	f.stdin.Close()
	n := 0
	if f.out.Scan() {
		n, _ = strconv.Atoi(f.out.Text())
	}
	if err := f.cmd.Wait(); err != nil {
		b.Fatal(err)
	}
	return n, f.cmd.ProcessState.UserTime() + f.cmd.ProcessState.SystemTime()
}

// BenchmarkRun runs the engine against a fake server in another process,
// so that the CPU time and peak memory printed are the engine's alone:
//   - 2,000 samples at 0 ms latency, concurrency 10: CPU per call (agent
//     and judge calls both count), target ≤ 0.25 ms (on Postgres, within
//     2 × SQLite's);
//   - 10,000 samples at 50 ms latency, concurrency 200 (20,000 calls): wall
//     time against the ideal (calls × latency / concurrency), target ≤ 1.10;
//   - the same with a stopping rule that is never met (stop: precise, at a
//     half-width no run reaches): its sequences kept after every sample,
//     target ≤ 1.10 as well;
//   - the peak RSS of each, target < 100 MB whatever the run's size.
//
// Each is run several times and the median printed with every run's
// figure: on the machine's two shared cores one run's CPU per call goes
// from 0.14 to 0.21 ms as the host's load comes and goes.
func BenchmarkRun(b *testing.B) {
	for _, c := range []struct {
		samples     int
		latency     time.Duration
		concurrency int
		runs        int
		stop        string
	}{{2000, 0, 10, 5, ""}, {10000, 50 * time.Millisecond, 200, 3, ""},
		{10000, 50 * time.Millisecond, 200, 3, "stop: {when: precise, metric: completeness, half_width: 0.0001}"}} {
		name := fmt.Sprintf("samples=%d/latency=%s/concurrency=%d", c.samples, c.latency, c.concurrency)
		if c.stop != "" {
			name += "/stop"
		}
		b.Run(name, func(b *testing.B) {
			for range b.N {
				var runs []engineRun
				for range c.runs {
					runs = append(runs, benchOnce(b, c.samples, c.latency, c.concurrency, c.stop))
				}
				reportRuns(b, c.samples, c.latency, c.concurrency, runs)
			}
		})
	}
}

// engineRun is what one run of the engine benchmark measured.
type engineRun struct {
	calls                int
	wall, cpu, serverCPU time.Duration
	ideal                time.Duration
	peakMiB              float64
}

// perCall is d in milliseconds per call.
func (r engineRun) perCall(d time.Duration) float64 {
	return float64(d.Microseconds()) / 1000 / float64(r.calls)
}

func (r engineRun) wallRatio() float64 {
	if r.ideal == 0 {
		return 0
	}
	return float64(r.wall) / float64(r.ideal)
}

// reportRuns prints the median of the runs' figures, and each run's.
func reportRuns(b *testing.B, samples int, latency time.Duration, concurrency int, runs []engineRun) {
	median := func(f func(engineRun) float64) (float64, string) {
		var xs []float64
		var each []string
		for _, r := range runs {
			xs = append(xs, f(r))
			each = append(each, fmt.Sprintf("%.3f", f(r)))
		}
		slices.Sort(xs)
		return xs[len(xs)/2], strings.Join(each, " ")
	}
	perCall, perCallEach := median(func(r engineRun) float64 { return r.perCall(r.cpu) })
	ratio, ratioEach := median(engineRun.wallRatio)
	server, _ := median(func(r engineRun) float64 { return r.perCall(r.serverCPU) })
	peak := 0.0
	for _, r := range runs {
		peak = max(peak, r.peakMiB)
	}
	b.ReportMetric(perCall, "cpu-ms/call")
	b.ReportMetric(peak, "peak-MiB")
	wallNote := ""
	if latency > 0 {
		b.ReportMetric(ratio, "wall/ideal")
		wallNote = fmt.Sprintf(", wall/ideal %.2f (target ≤ 1.10; runs %s)", ratio, ratioEach)
	}
	target, where := "≤ 0.25", ""
	if pgtest.OnPostgres() {
		target, where = "within 2 × SQLite's", " on Postgres"
	}
	fmt.Printf("engine%s, %d samples at %s, concurrency %d, %d calls a run, median of %d runs: CPU %.3f ms per call (target %s; runs %s)%s, peak RSS %.0f MiB (target < 100); the fake server beside it: %.3f ms CPU per call\n",
		where, samples, latency, concurrency, runs[0].calls, len(runs), perCall, target, perCallEach, wallNote, peak, server)
}

func benchOnce(b *testing.B, samples int, latency time.Duration, concurrency int, more string) engineRun {
	dir := b.TempDir()
	dbPath := filepath.Join(dir, "assay.db")
	if pgtest.OnPostgres() {
		dbPath = pgtest.DSN(b)
	}
	db, err := tally.Open(context.Background(), dbPath)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	srv := startFake(b, latency)
	cfg := benchConfig(b, dir, samples, srv.URL, concurrency, more)
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
	peak := float64(peakRSS()) / (1 << 20)
	calls, serverCPU := srv.stop(b)
	if want := callsWanted(samples, more); calls < want {
		b.Fatalf("the fake server answered %d calls, want %d", calls, want)
	}
	return engineRun{calls: calls, wall: wall, cpu: cpu, serverCPU: serverCPU,
		ideal: time.Duration(calls) * latency / time.Duration(concurrency), peakMiB: peak}
}

// benchConfig writes a dataset of samples sums into dir and returns a run
// of it, one condition, answered and judged at url with concurrency calls
// at once; more is added to the run file.
func benchConfig(b *testing.B, dir string, samples int, url string, concurrency int, more string) *config.Config {
	var data strings.Builder
	for i := 1; i <= samples; i++ {
		fmt.Fprintf(&data, "{\"question\": \"What is %d + %d?\", \"answer\": \"%d\"}\n", i, i, 2*i)
	}
	path := filepath.Join(dir, "qa.jsonl")
	if err := os.WriteFile(path, []byte(data.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	yaml := fmt.Sprintf(`dataset: {path: %q}
agent: {type: openai, model: m, base_url: %q}
judge: {model: j, base_url: %q}
conditions: {baseline: {system_prompt: "Answer."}}
execution: {num_repetitions: 1, max_concurrent: %d}
%s
`, path, url, url, concurrency, more)
	cfg, err := config.Parse([]byte(yaml), "bench.yaml", dir, func(string) string { return "" })
	if err != nil {
		b.Fatal(err)
	}
	return cfg
}

// callsWanted is the live calls a run of samples makes: the agent's, and
// the judge's unless they go in batches or no answer is judged.
func callsWanted(samples int, more string) int {
	if strings.Contains(more, "batch:") || strings.Contains(more, "judge_sample_rate: 0") {
		return samples
	}
	return 2 * samples
}

// BenchmarkBatchedJudge measures what a judge call sent in a batch costs
// the engine, past the agent's call of its task: 2,000 samples at 0 ms,
// concurrency 10, with the judge calls in batches (1,000 lines each), live,
// and not at all. A line's CPU (batched less unjudged, per task) is a judge
// call's work (its prompt, parsing, storing the judgement) and the batch
// path's; what it takes past a live judge call's is the batch path's
// overhead (target < 0.2 ms).
func BenchmarkBatchedJudge(b *testing.B) {
	const samples = 2000
	for range b.N {
		var batched, bare, live []float64
		for range 3 {
			r := benchOnce(b, samples, 0, 10, "batch: {judge: true, gather: 50ms, poll: 20ms}")
			n := benchOnce(b, samples, 0, 10, "judge_sample_rate: 0")
			l := benchOnce(b, samples, 0, 10, "")
			batched = append(batched, float64(r.cpu.Microseconds())/1000/samples)
			bare = append(bare, float64(n.cpu.Microseconds())/1000/samples)
			live = append(live, float64(l.cpu.Microseconds())/1000/samples)
		}
		for _, xs := range [][]float64{batched, bare, live} {
			slices.Sort(xs)
		}
		perLine, perCall := batched[1]-bare[1], live[1]-bare[1]
		b.ReportMetric(perLine-perCall, "overhead-cpu-ms/line")
		fmt.Printf("judge calls in batches, %d samples at 0 ms, concurrency 10, medians of 3 runs: CPU per task %.3f ms with the judge calls in batches, %.3f ms live, %.3f ms unjudged: a line costs %.3f ms, a live judge call %.3f ms: the batch path's overhead %.3f ms a line (target < 0.2)\n",
			samples, batched[1], live[1], bare[1], perLine, perCall, perLine-perCall)
	}
}

// BenchmarkCallFloor makes the engine benchmark's 20,000 calls at 50 ms
// and concurrency 200 with the client alone, two calls per task and
// nothing else, against the same fake server in its own process: the floor
// under BenchmarkRun's figures on this machine, which the engine's own work
// (prompts, the judge's parsing, the database) comes on top of. Two shapes:
// two small calls; and a small call then one the size of the engine's
// judge call (five kilobytes of prompt and a JSON schema, answered in
// JSON), which is the exchange the engine makes.
func BenchmarkCallFloor(b *testing.B) {
	for _, shape := range []string{"small", "judge-sized"} {
		b.Run("calls="+shape, func(b *testing.B) {
			for range b.N {
				f := callFloor(b, shape == "judge-sized", 10000, 200, 50*time.Millisecond)
				shape := "small"
				if f.judgeSized {
					shape = "one small, one judge-sized"
				}
				b.ReportMetric(f.perCall(), "cpu-ms/call")
				fmt.Printf("calls alone (%s), %d at %s, concurrency %d: CPU %.3f ms per call, wall/ideal %.2f; the fake server beside it: %.3f ms CPU per call\n",
					shape, f.calls, f.latency, f.concurrency, f.perCall(), f.wallRatio(), f.serverPerCall())
			}
		})
	}
}

// floorRun is what callFloor measured.
type floorRun struct {
	judgeSized           bool
	calls, concurrency   int
	latency, wall, ideal time.Duration
	cpu, serverCPU       time.Duration
}

func (f floorRun) perCall() float64 {
	return float64(f.cpu.Microseconds()) / 1000 / float64(f.calls)
}
func (f floorRun) serverPerCall() float64 {
	return float64(f.serverCPU.Microseconds()) / 1000 / float64(f.calls)
}
func (f floorRun) wallRatio() float64 { return float64(f.wall) / float64(f.ideal) }

// callFloor makes two calls a task for tasks tasks, concurrency at a time,
// with the client alone against a fake server in its own process.
func callFloor(b *testing.B, judgeSized bool, tasks, concurrency int, latency time.Duration) floorRun {
	srv := startFake(b, latency)
	zero := 0.0
	c := llm.New(llm.Config{BaseURL: srv.URL, Model: "m", Temperature: &zero}, nil)
	turns := []llm.Request{
		{Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "What is 1 + 1?"}}},
		{Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "And 2 + 2?"}}},
	}
	if judgeSized {
		turns[1] = judgeSizedRequest(b)
	}
	work := make(chan int)
	var wg sync.WaitGroup
	cpu0, start := cpuTime(), time.Now()
	for range concurrency {
		wg.Go(func() {
			for range work {
				for _, turn := range turns {
					resp, err := c.Chat(context.Background(), turn)
					if err != nil {
						b.Error(err)
					} else if turn.ResponseFormat != nil && !strings.HasPrefix(resp.Content, "{") {
						b.Errorf("the judge-sized call was answered %q, not with a JSON object", resp.Content)
					}
				}
			}
		})
	}
	for i := range tasks {
		work <- i
	}
	close(work)
	wg.Wait()
	wall, cpu := time.Since(start), cpuTime()-cpu0
	calls, serverCPU := srv.stop(b)
	return floorRun{judgeSized: judgeSized, calls: calls, concurrency: concurrency, latency: latency,
		wall: wall, ideal: time.Duration(calls) * latency / time.Duration(concurrency), cpu: cpu, serverCPU: serverCPU}
}

// judgeSizedRequest is a request the size of the engine's rubric judge
// call: a five-kilobyte prompt and the rubric's schema, which the fake
// server answers with a JSON object.
func judgeSizedRequest(b *testing.B) llm.Request {
	score := `{"type": "integer", "minimum": 1, "maximum": 5}`
	schema, err := llm.NewSchema([]byte(`{"type": "object", "additionalProperties": false,
		"required": ["factual_adherence", "completeness", "helpfulness_and_clarity", "unverified_claims"],
		"properties": {"factual_adherence": ` + score + `, "completeness": ` + score + `,
		"helpfulness_and_clarity": ` + score + `, "unverified_claims": {"type": "array", "items": {"type": "string"}}}}`))
	if err != nil {
		b.Fatal(err)
	}
	prompt := strings.Repeat("Score the response against the reference on each criterion of the rubric. ", 60)
	return llm.Request{
		Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: prompt}},
		ResponseFormat: &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{Name: "rubric", Strict: true, Schema: schema}},
	}
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

// BenchmarkResumeLarge resumes a run of 150,000 tasks (10,000 samples × 5
// conditions × 3 repetitions) of which all but 1,000 are done, against the
// fake server in its own process, and prints the engine's peak RSS while it
// plans and finishes the run: what a run of that size holds of its finished
// tasks and its plan. Target < 100 MB.
func BenchmarkResumeLarge(b *testing.B) {
	const samples, conditions, reps, left = 10000, 5, 3, 1000
	ctx := context.Background()
	dir := b.TempDir()
	db, err := tally.Open(ctx, filepath.Join(dir, "assay.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	srv := startFake(b, 0)
	var data strings.Builder
	for i := 1; i <= samples; i++ {
		fmt.Fprintf(&data, "{\"question\": \"What is %d + %d? Explain the steps.\", \"answer\": \"%d\"}\n", i, i, 2*i)
	}
	path := filepath.Join(dir, "qa.jsonl")
	if err := os.WriteFile(path, []byte(data.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	var conds strings.Builder
	for c := 1; c <= conditions; c++ {
		fmt.Fprintf(&conds, "  c%d: {system_prompt: \"Answer.\"}\n", c)
	}
	yaml := fmt.Sprintf(`dataset: {path: %q}
agent: {type: openai, model: m, base_url: %q}
judge: {model: j, base_url: %q}
conditions:
%sexecution: {num_repetitions: %d, max_concurrent: 50}
`, path, srv.URL, srv.URL, conds.String(), reps)
	cfg, err := config.Parse([]byte(yaml), "bench.yaml", dir, func(string) string { return "" })
	if err != nil {
		b.Fatal(err)
	}
	m := runner.New(db, runner.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	defer m.Close(ctx)
	run, err := m.CreateFromConfig(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	// The finished tasks, stored side by side so that their commits batch.
	rows, _ := db.Samples(ctx, run.DatasetID, 0, 0)
	start := time.Now()
	keys := make(chan store.TaskKey, 256)
	errs := make(chan error, 16)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for k := range keys {
				_, err := db.SaveResult(ctx, &store.Result{RunID: run.ID, SampleRow: k.SampleRow, Condition: k.Condition,
					Repetition: k.Repetition, Response: "The answer is 4.", TokensIn: 40, TokensOut: 8, Attempts: 1,
					Judgements: []store.Judgement{{Evaluator: "rubric", Raw: `{"factual_adherence": 4}`, Scores: []store.Score{
						{Metric: "factual_adherence", Value: 4, Reasoning: "Right."}, {Metric: "completeness", Value: 5, Reasoning: "Whole."},
						{Metric: "helpfulness_and_clarity", Value: 3, Reasoning: "Terse."}}}}})
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	n := 0
	for rep := 1; rep <= reps; rep++ {
		for i, s := range rows {
			for _, c := range run.Conditions {
				if rep == reps && i >= len(rows)-left/conditions {
					continue // left to do
				}
				select {
				case err := <-errs:
					b.Fatal(err)
				case keys <- store.TaskKey{SampleRow: s.ID, Condition: c.Name, Repetition: rep}:
				}
				n++
			}
		}
	}
	close(keys)
	wg.Wait()
	select {
	case err := <-errs:
		b.Fatal(err)
	default:
	}
	fmt.Printf("stored %d finished tasks in %s\n", n, time.Since(start).Round(time.Millisecond))

	runtime.GC()
	debug.FreeOSMemory()
	resetPeakRSS()
	before := float64(peakRSS()) / (1 << 20)
	b.ResetTimer()
	status, err := m.Execute(ctx, run.ID)
	if err != nil || status != store.RunCompleted {
		b.Fatalf("status %s, err %v", status, err)
	}
	peak := float64(peakRSS()) / (1 << 20)
	b.ReportMetric(peak, "peak-MiB")
	fmt.Printf("resume of a run of %d tasks with %d left: peak RSS %.0f MiB (%.0f before; target < 100)\n",
		samples*conditions*reps, samples*conditions*reps-n, peak, before)
	srv.stop(b)
}

// BenchmarkRunLargeDataset runs seven times MMLU's test set: 100,000
// multiple-choice questions (a file of about 50 MB, with choices and a
// subject each), one condition, against the fake server in its own
// process, and prints the process's peak RSS from reading the file to the
// run's end: what `assay run` holds of a large dataset, the file's pages
// (mapped while it is imported) included. Target < 100 MB.
func BenchmarkRunLargeDataset(b *testing.B) {
	const samples = 100000
	ctx := context.Background()
	dir := b.TempDir()
	db, err := tally.Open(ctx, filepath.Join(dir, "assay.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	srv := startFake(b, 0)
	f, err := os.Create(filepath.Join(dir, "mmlu.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	subjects := []string{"abstract_algebra", "anatomy", "astronomy", "business_ethics", "clinical_knowledge"}
	for i := 1; i <= samples; i++ {
		stem := strings.Repeat(fmt.Sprintf("In the setting of problem %d, consider what follows. ", i), 4)
		fmt.Fprintf(w, `{"question": %q, "choices": [%q, %q, %q, %q], "answer": %d, "subject": %q}`+"\n", stem+"Which statement holds?",
			"The first statement, which names a mechanism and a consequence of it.", "The second statement, which names another mechanism.",
			"The third statement, which holds only in a special case.", "None of the statements above holds in general.", i%4, subjects[i%5])
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	info, _ := f.Stat()
	f.Close()
	yaml := fmt.Sprintf(`dataset: {path: %q}
agent: {type: openai, model: m, base_url: %q}
conditions: {baseline: {system_prompt: "Answer with the letter."}}
execution: {num_repetitions: 1, max_concurrent: 50}
`, f.Name(), srv.URL)
	cfg, err := config.Parse([]byte(yaml), "bench.yaml", dir, func(string) string { return "" })
	if err != nil {
		b.Fatal(err)
	}
	m := runner.New(db, runner.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	defer m.Close(ctx)
	runtime.GC()
	debug.FreeOSMemory()
	resetPeakRSS()
	before := float64(peakRSS()) / (1 << 20)
	start := time.Now()
	run, err := m.CreateFromConfig(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	imported := float64(peakRSS()) / (1 << 20)
	took := time.Since(start)
	runtime.GC()
	debug.FreeOSMemory()
	resetPeakRSS()
	b.ResetTimer()
	status, err := m.Execute(ctx, run.ID)
	if err != nil || status != store.RunCompleted {
		b.Fatalf("status %s, err %v", status, err)
	}
	peak := float64(peakRSS()) / (1 << 20)
	calls, _ := srv.stop(b)
	if calls < samples {
		b.Fatalf("the fake server answered %d calls, want %d", calls, samples)
	}
	b.ReportMetric(peak, "peak-MiB")
	fmt.Printf("a run over %d questions (%.0f MB of JSONL): imported in %.1f s, peak RSS %.0f MiB (%.0f before; the file's pages mapped meanwhile), then %.0f MiB to the run's end (target < 100)\n",
		samples, float64(info.Size())/1e6, took.Seconds(), imported, before, peak)
}
