package main

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver

	"assay/internal/pgtest"
	"assay/runner/llm/llmtest"
	"assay/store"
	"assay/tally"
)

// buildBinary builds assay once per test binary into a temporary folder.
func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "assay")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// crashFixture is a run file over 10 samples × 2 conditions × 3 repetitions
// whose model answers slowly enough to be killed midway.
func crashFixture(t *testing.T) (srv *llmtest.Server, cfgPath, dbPath string) {
	t.Helper()
	srv = llmtest.New(llmtest.JudgeAndAgent(llmtest.Judge(nil), llmtest.Text("The answer is 4.")), llmtest.WithLatency(40*time.Millisecond))
	t.Cleanup(srv.Close)
	return srv, writeRunFile(t, srv, "execution: {num_repetitions: 3, max_concurrent: 2}"), pgtest.Database(t)
}

// writeRunFile writes a run file over 10 samples × conditions a and b,
// its agent and judge srv, with more settings after.
func writeRunFile(t *testing.T, srv *llmtest.Server, more string) string {
	dir := t.TempDir()
	var data strings.Builder
	for i := 1; i <= 10; i++ {
		fmt.Fprintf(&data, "{\"question\": \"Q%d?\", \"answer\": \"A%d\"}\n", i, i)
	}
	os.WriteFile(filepath.Join(dir, "questions.jsonl"), []byte(data.String()), 0o644)
	cfg := fmt.Sprintf(`name: crash
dataset: {path: ./questions.jsonl}
agent: {type: openai, model: m, base_url: %q}
judge: {model: j, base_url: %q}
conditions:
  a: {system_prompt: "A"}
  b: {system_prompt: "B"}
%s
`, srv.URL, srv.URL, more)
	path := filepath.Join(dir, "run.yaml")
	os.WriteFile(path, []byte(cfg), 0o644)
	return path
}

// killMidway starts `assay run`, waits for some results, and SIGKILLs it.
func killMidway(t *testing.T, bin string, args ...string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var said bytes.Buffer
	cmd.Stdout, cmd.Stderr = &said, &said
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	dbPath := args[len(args)-1]
	deadline := time.Now().Add(60 * time.Second)
	for countResults(t, dbPath) < 8 {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("no progress before the kill; assay run said:\n%s", said.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
}

// countResults counts run 1's results through a read-only connection of
// its own: opening the store (its migrations each a write transaction)
// every 20 ms competed with the run for the database's write lock.
func countResults(t *testing.T, dbPath string) int {
	var n int
	if readRaw(dbPath, `SELECT count(*) FROM results WHERE run_id = 1`, &n) != nil {
		return 0 // not created yet
	}
	return n
}

// run1Status reads run 1's status the same way; "" before it exists.
func run1Status(dbPath string) string {
	var s string
	readRaw(dbPath, `SELECT status FROM runs WHERE id = 1`, &s)
	return s
}

// readRaw reads one value through a read-only connection of its own.
func readRaw(dbPath, query string, into any) error {
	driver, dsn := "pgx", dbPath
	if !store.IsPostgres(dbPath) {
		if _, err := os.Stat(dbPath); err != nil {
			return err
		}
		driver, dsn = "sqlite", "file:"+dbPath+"?mode=ro&_pragma=busy_timeout(10000)"
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	return db.QueryRow(query).Scan(into)
}

// checkExactlyOnce asserts every one of the tasks of run 1 has one result
// with one judgement, and the run completed.
func checkExactlyOnce(t *testing.T, dbPath string, tasks int) {
	t.Helper()
	db, err := tally.Open(context.Background(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	results, _ := db.Results(context.Background(), 1)
	seen := map[store.TaskKey]int{}
	for _, r := range results {
		seen[store.TaskKey{SampleRow: r.SampleRow, Condition: r.Condition, Repetition: r.Repetition}]++
		if len(r.Judgements) != 1 {
			t.Errorf("result %d has %d judgements", r.ID, len(r.Judgements))
		}
	}
	if len(results) != tasks || len(seen) != tasks {
		t.Fatalf("want %d tasks exactly once, got %d results for %d tasks", tasks, len(results), len(seen))
	}
	run, _ := db.Run(context.Background(), 1)
	if run.Status != store.RunCompleted {
		t.Fatalf("run status %s", run.Status)
	}
}

func TestKilledRunResumesFromCommandLine(t *testing.T) {
	bin := buildBinary(t)
	_, cfgPath, dbPath := crashFixture(t)
	killMidway(t, bin, "run", "--quiet", "--config", cfgPath, "--db", dbPath)
	before := countResults(t, dbPath)
	if before >= 60 {
		t.Fatalf("the kill came too late: %d results", before)
	}
	out, err := exec.Command(bin, "run", "--resume", "1", "--json", "--db", dbPath).CombinedOutput()
	if err != nil {
		t.Fatalf("resume: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), `"status":"completed"`) {
		t.Fatalf("resume output %s", out)
	}
	checkExactlyOnce(t, dbPath, 60)
}

func TestKilledRunResumesWhenServing(t *testing.T) {
	bin := buildBinary(t)
	_, cfgPath, dbPath := crashFixture(t)
	killMidway(t, bin, "run", "--quiet", "--config", cfgPath, "--db", dbPath)
	serve := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--db", dbPath, "--no-auth")
	stdout, _ := serve.StdoutPipe()
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { serve.Process.Signal(syscall.SIGTERM); serve.Wait() }()
	lines := bufio.NewScanner(stdout)
	var said []string
	for len(said) < 2 && lines.Scan() {
		said = append(said, lines.Text())
	}
	if len(said) < 2 || !strings.Contains(said[1], "resumed unfinished runs [1]") {
		t.Fatalf("serve should say it resumed run 1: %q", said)
	}
	// Done once the run says so: its last result is saved a moment before.
	deadline := time.Now().Add(60 * time.Second)
	for run1Status(dbPath) != string(store.RunCompleted) {
		if time.Now().After(deadline) {
			t.Fatalf("serve did not finish the run: %d results, run %s", countResults(t, dbPath), run1Status(dbPath))
		}
		time.Sleep(50 * time.Millisecond)
	}
	serve.Process.Signal(syscall.SIGTERM)
	serve.Wait()
	checkExactlyOnce(t, dbPath, 60)
}

// Two processes on one database: a run that `assay run` executes is left
// alone by a server started meanwhile and by `assay run --resume`, which
// says who holds it; every task's calls are made once.
func TestTwoProcessesExecuteARunOnce(t *testing.T) {
	bin := buildBinary(t)
	srv, cfgPath, dbPath := crashFixture(t)
	first := exec.Command(bin, "run", "--quiet", "--config", cfgPath, "--db", dbPath)
	var firstOut strings.Builder
	first.Stdout = &firstOut
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	for countResults(t, dbPath) < 4 {
		time.Sleep(20 * time.Millisecond)
	}
	startServer(t, "--db", dbPath)
	out, err := exec.Command(bin, "run", "--resume", "1", "--db", dbPath).CombinedOutput()
	if err == nil || !strings.Contains(string(out), fmt.Sprintf("run 1 is being executed by assay run (pid %d on ", first.Process.Pid)) {
		t.Errorf("a second assay run on the same run: %v\n%s", err, out)
	}
	if err := first.Wait(); err != nil {
		t.Fatalf("the first assay run: %v\n%s", err, firstOut.String())
	}
	checkExactlyOnce(t, dbPath, 60)
	if got := srv.Stats().Requests; got != 120 {
		t.Errorf("the fake server saw %d calls for 60 tasks, want 60 agent and 60 judge calls", got)
	}
}

// A run of 3,000 tasks at concurrency 64, whose results commit in batches,
// killed three times midway and resumed: every task has one result with one
// judgement, no call finished before a kill was made again beyond what was
// in flight (nine tasks per worker at most), and the summary read from the aggregates kept batch by batch
// equals the one computed again from the results. Each kill comes once the
// fake server has been asked a given number of calls, and holds the calls
// past that number, so that the run is midway whatever the machine's load.
func TestKilledThreeTimesAtScale(t *testing.T) {
	bin := buildBinary(t)
	var calls, limit atomic.Int64
	var gate atomic.Pointer[chan struct{}]
	inner := llmtest.JudgeAndAgent(llmtest.Judge(nil), llmtest.Text("The answer is 4."))
	held := func(req *llmtest.ChatRequest) llmtest.Reply {
		if calls.Add(1) > limit.Load() {
			<-*gate.Load()
		}
		return inner(req)
	}
	hold := func(after int64) {
		ch := make(chan struct{})
		gate.Store(&ch)
		limit.Store(after)
	}
	hold(1 << 62)
	srv := llmtest.New(held, llmtest.WithLatency(5*time.Millisecond))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	var data strings.Builder
	for i := 1; i <= 500; i++ {
		fmt.Fprintf(&data, "{\"question\": \"Q%d?\", \"answer\": \"A%d\"}\n", i, i)
	}
	os.WriteFile(filepath.Join(dir, "questions.jsonl"), []byte(data.String()), 0o644)
	cfgPath, dbPath := filepath.Join(dir, "run.yaml"), pgtest.Database(t)
	os.WriteFile(cfgPath, []byte(fmt.Sprintf(`name: crash at scale
dataset: {path: ./questions.jsonl}
agent: {type: openai, model: m, base_url: %q}
judge: {model: j, base_url: %q}
conditions:
  a: {system_prompt: "A"}
  b: {system_prompt: "B"}
execution: {num_repetitions: 3, max_concurrent: 64}
`, srv.URL, srv.URL)), 0o644)

	const tasks, concurrency = 3000, 64
	args := []string{"run", "--quiet", "--config", cfgPath, "--db", dbPath}
	for _, at := range []int64{800, 2600, 4400} { // calls: about 400, 1,300 and 2,200 tasks
		hold(at)
		cmd := exec.Command(bin, args...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(120 * time.Second)
		for calls.Load() < at {
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				t.Fatalf("%d calls before the kill, want %d", calls.Load(), at)
			}
			time.Sleep(10 * time.Millisecond)
		}
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		close(*gate.Load()) // the held calls' client is gone
		if n := countResults(t, dbPath); n >= tasks {
			t.Fatalf("the kill at %d calls came after the run's end", at)
		}
		args = []string{"run", "--quiet", "--resume", "1", "--db", dbPath}
	}
	hold(1 << 62)
	out, err := exec.Command(bin, "run", "--resume", "1", "--json", "--db", dbPath).CombinedOutput()
	if err != nil || !strings.Contains(string(out), `"status":"completed"`) {
		t.Fatalf("resume: %v\n%s", err, out)
	}
	checkExactlyOnce(t, dbPath, tasks)
	// Each kill may cost what was in flight, per worker: the answer and
	// judge call of its last eight tasks, whose results awaited their
	// commit while the worker went on (runner's savesAhead), and those of
	// the task it was doing.
	if calls, most := calls.Load(), int64(2*tasks+3*(8+1)*2*concurrency); calls > most {
		t.Errorf("%d calls for %d tasks and three kills, want at most %d", calls, tasks, most)
	}
	kept := summaryJSON(t, dbPath, 1)
	db, err := tally.Open(context.Background(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := tally.Of(db).RebuildAggregates(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if again := summaryJSON(t, dbPath, 1); again != kept {
		t.Errorf("the summary from the aggregates kept batch by batch differs from the one computed again:\n%s\n%s", kept, again)
	}
}
