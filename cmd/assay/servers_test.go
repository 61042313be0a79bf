package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"assay/internal/pgtest"
	"assay/runner/llm/llmtest"
	"assay/store"
	"assay/tally"
)

// node is an `assay serve` process of its own, killable.
type node struct {
	url string
	cmd *exec.Cmd
}

func startNode(t *testing.T, bin, db string) *node {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--db", db, "--no-auth")
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	n := &node{cmd: cmd}
	t.Cleanup(func() { n.cmd.Process.Signal(syscall.SIGTERM); n.cmd.Wait() })
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		if strings.Contains(lines.Text(), pgtest.Password) {
			t.Errorf("the server printed the database's password: %s", lines.Text())
		}
		if u := regexp.MustCompile(`serving (https?://\S+)`).FindStringSubmatch(lines.Text()); u != nil {
			n.url = u[1]
			break
		}
	}
	if n.url == "" {
		t.Fatal("the server said no address")
	}
	go io.Copy(io.Discard, stdout)
	return n
}

func (n *node) call(t *testing.T, method, path string, body any) (int, []byte) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, n.url+path, r)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// cluster is three `assay serve` processes on one database (a SQLite file,
// or Postgres under ASSAY_TEST_STORE=postgres), a fake model, a dataset
// of n samples and two conditions made through the API.
type cluster struct {
	bin, db string
	fake    *llmtest.Server
	gate    *callGate
	nodes   []*node
}

// callGate lets an agent model's first calls through, as many as it is
// allowed, and holds the rest until it is opened: a run kept from ending
// while a test looks at it, however slow the machine.
type callGate struct {
	mu      sync.Mutex
	allowed map[string]int
	opened  map[string]chan struct{}
}

// limit lets the model's next n calls through, and holds those after.
func (g *callGate) limit(model string, n int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.allowed[model] = n
	g.opened[model] = make(chan struct{})
}

// open lets the model's held calls, and all after them, through.
func (g *callGate) open(model string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if ch, ok := g.opened[model]; ok {
		close(ch)
		delete(g.opened, model)
	}
}

func (g *callGate) openAll() {
	g.mu.Lock()
	models := slices.Collect(maps.Keys(g.opened))
	g.mu.Unlock()
	for _, m := range models {
		g.open(m)
	}
}

// wrap holds the calls past their model's limit.
func (g *callGate) wrap(h llmtest.Handler) llmtest.Handler {
	return func(req *llmtest.ChatRequest) llmtest.Reply {
		g.mu.Lock()
		ch, held := g.opened[req.Model]
		if held && g.allowed[req.Model] > 0 {
			g.allowed[req.Model]--
			held = false
		}
		g.mu.Unlock()
		if held {
			<-ch
		}
		return h(req)
	}
}

func newCluster(t *testing.T, samples int, latency time.Duration) *cluster {
	t.Helper()
	c := &cluster{bin: buildBinary(t), db: pgtest.Database(t)}
	c.gate = &callGate{allowed: map[string]int{}, opened: map[string]chan struct{}{}}
	c.fake = llmtest.New(c.gate.wrap(varied()), llmtest.WithLatency(latency))
	t.Cleanup(c.fake.Close)
	t.Cleanup(c.gate.openAll) // before the fake server closes: no call held past the test
	dir := t.TempDir()
	writeSums(dir, samples)
	if err := run(context.Background(), []string{"import", "--file", filepath.Join(dir, "questions.jsonl"), "--db", c.db}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	c.nodes = []*node{startNode(t, c.bin, c.db), startNode(t, c.bin, c.db), startNode(t, c.bin, c.db)}
	for i, name := range []string{"a", "b"} {
		if code, b := c.nodes[i].call(t, "POST", "/api/conditions", map[string]any{"name": name, "system_prompt": "Answer " + name}); code != 201 {
			t.Fatalf("condition %s: %d %s", name, code, b)
		}
	}
	return c
}

// launch starts a run of the dataset under both conditions, three
// repetitions, two tasks at once, through n's API.
func (c *cluster) launch(t *testing.T, n *node) int64 { return c.launchWith(t, n, "m") }

// launchWith is launch with the agent's model named.
func (c *cluster) launchWith(t *testing.T, n *node, model string) int64 {
	t.Helper()
	code, b := n.call(t, "POST", "/api/runs", map[string]any{"dataset_id": 1, "conditions": []string{"a", "b"},
		"run": map[string]any{"agent": map[string]any{"type": "openai", "model": model, "base_url": c.fake.URL},
			"judge": map[string]any{"model": "j", "base_url": c.fake.URL}, "execution": map[string]any{"num_repetitions": 3, "max_concurrent": 2}}})
	var launched struct {
		RunID int64 `json:"run_id"`
	}
	if json.Unmarshal(b, &launched); code != 201 || launched.RunID == 0 {
		t.Fatalf("launch on %s: %d %s", n.url, code, b)
	}
	return launched.RunID
}

// results counts a run's results in the database.
func (c *cluster) results(id int64) int {
	s, err := tally.Open(context.Background(), c.db)
	if err != nil {
		return 0
	}
	defer s.Close()
	r, _ := s.Results(context.Background(), id)
	return len(r)
}

// executors reads, from n, who executes a run.
func (c *cluster) executors(t *testing.T, n *node, id int64) ([]store.Executor, []byte) {
	_, b := n.call(t, "GET", fmt.Sprintf("/api/runs/%d", id), nil)
	var r struct {
		Executors []store.Executor `json:"executors"`
	}
	json.Unmarshal(b, &r)
	return r.Executors, b
}

// settle waits, asking n, until every run completed; then checks each has
// its tasks once with one judgement, and that its report is byte for byte
// the same from every server of live.
func (c *cluster) settle(t *testing.T, runs []int64, tasks int, live ...*node) {
	t.Helper()
	for _, id := range runs {
		for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
			_, b := live[0].call(t, "GET", fmt.Sprintf("/api/runs/%d", id), nil)
			var r struct {
				Status string `json:"status"`
			}
			json.Unmarshal(b, &r)
			if r.Status == "completed" {
				if bytes.Contains(b, []byte(`"executors"`)) {
					t.Errorf("a completed run lists executors: %s", b)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("run %d is %s after three minutes", id, r.Status)
			}
		}
	}
	s, err := tally.Open(context.Background(), c.db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, id := range runs {
		rs, _ := s.Results(context.Background(), id)
		seen := map[store.TaskKey]int{}
		for _, r := range rs {
			seen[store.TaskKey{SampleRow: r.SampleRow, Condition: r.Condition, Repetition: r.Repetition}]++
			if len(r.Judgements) != 1 {
				t.Errorf("run %d result %d has %d judgements", id, r.ID, len(r.Judgements))
			}
		}
		if len(rs) != tasks || len(seen) != tasks {
			t.Errorf("run %d: %d results for %d tasks, want %d once each", id, len(rs), len(seen), tasks)
		}
		_, want := live[0].call(t, "GET", fmt.Sprintf("/api/runs/%d/report", id), nil)
		for _, n := range live[1:] {
			if _, got := n.call(t, "GET", fmt.Sprintf("/api/runs/%d/report", id), nil); !bytes.Equal(got, want) {
				t.Errorf("run %d's report differs between servers:\n%.300s\n%.300s", id, got, want)
			}
		}
	}
}

// Three servers on one database: conditions made on two, a run launched
// on each, every page read from any; the server executing a run killed,
// twice (the first started again): another server, or it restarted, takes
// the run over and every task ends once, no call made again beyond those
// in flight, and the report of every run is the same from every server.
func TestServersShareOneDatabase(t *testing.T) {
	c := newCluster(t, 10, 40*time.Millisecond)
	nodes := c.nodes
	var runs []int64
	for i, n := range nodes {
		// The runs of the servers to be killed answer half their tasks, then
		// wait until their server is killed: each is still under way when
		// looked at, however slow the machine.
		model := fmt.Sprintf("m%d", i)
		if i > 0 {
			c.gate.limit(model, 30)
		}
		runs = append(runs, c.launchWith(t, n, model))
	}
	again := 0 // calls that may be made again: in flight on the killed servers
	for k, i := range []int{1, 2} {
		for deadline := time.Now().Add(time.Minute); c.results(runs[i]) < 5; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("run %d made no progress", runs[i])
			}
		}
		// Another server says who executes the run, and how far each got
		// (on Postgres the other servers may share it).
		node := fmt.Sprintf("assay serve (pid %d on ", nodes[i].cmd.Process.Pid)
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
			executors, b := c.executors(t, nodes[0], runs[i])
			k := slices.IndexFunc(executors, func(e store.Executor) bool { return strings.Contains(e.Node, node) })
			if k >= 0 && executors[k].LeaseUntil.After(time.Now().Add(-time.Minute)) &&
				(len(executors) == 1 && executors[k].TasksDone >= 5 || pgtest.OnPostgres()) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("run %d's executors, from another server: %s", runs[i], b)
			}
		}
		for _, path := range []string{"/runs/%d", "/runs/%d/progress"} { // the page, and its polled part
			if _, page := nodes[0].call(t, "GET", fmt.Sprintf(path, runs[i]), nil); !bytes.Contains(page, []byte(`id="executor">Executed by `)) ||
				!bytes.Contains(page, []byte(node)) {
				t.Errorf("run %d's live page (%s), on another server, does not name its executor: %.2000s", runs[i], path, page)
			}
		}
		// What the server about to be killed has in flight may be done
		// again: two tasks (max_concurrent) of each run it executes, an
		// agent's and a judge's call each. Any run under way may be one of
		// them: a server whose own run waits joins another on Postgres, and
		// takes over a killed server's run on SQLite, between any look at
		// the executors and the kill.
		for _, id := range runs {
			if c.results(id) < 60 {
				again += 2 * 2
			}
		}
		nodes[i].cmd.Process.Signal(syscall.SIGKILL)
		nodes[i].cmd.Wait()
		c.gate.open(fmt.Sprintf("m%d", i))
		if k == 0 {
			nodes[i] = startNode(t, c.bin, c.db)
		}
	}
	c.settle(t, runs, 60, nodes[0], nodes[1])
	if calls := c.fake.Stats().Requests; calls > 3*60*2+again {
		t.Errorf("%d calls for 180 tasks; at most %d more were in flight at the kills", calls, again)
	}
}

// Five runs launched across three servers on one database, which share
// them (a run seen executed by two at once), one server SIGKILLed at up to
// ten moments a seeded random draw picks, and started again each time:
// every task of every run ends once, the calls made again are at most
// those in flight on the killed server at each kill, and every report is
// the same from every server. A server's start takes
// longer than the runs' progress on a busy machine: the kills stop when
// the runs are nearly done, five at least.
func TestAServerKilledTenTimes(t *testing.T) {
	if !pgtest.OnPostgres() {
		t.Skip("servers on several hosts share a Postgres database: runs when the tests run against Postgres (make test does); TestServersShareOneDatabase kills servers on a SQLite file")
	}
	c := newCluster(t, 20, 150*time.Millisecond)
	nodes := c.nodes
	var runs []int64
	for i := range 5 {
		runs = append(runs, c.launch(t, nodes[i%3]))
	}
	total := func() int {
		n := 0
		for _, id := range runs {
			n += c.results(id)
		}
		return n
	}
	draw := rand.New(rand.NewPCG(47, 10))
	again := 0 // calls that may be made again: in flight on the killed server
	kills := 0
	shared := false // a run was seen executed by several servers at once
	for range 10 {
		at := total() + 4 + draw.IntN(16)
		for deadline := time.Now().Add(time.Minute); total() < at; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("kill %d: no progress to %d results (%d)", kills+1, at, total())
			}
		}
		if at > 5*120-40 {
			break // the runs are nearly done
		}
		for _, id := range runs { // two tasks at once (max_concurrent) of each run it executes, an agent's and a judge's call each
			ex, _ := c.executors(t, nodes[0], id)
			shared = shared || len(ex) > 1
			if slices.ContainsFunc(ex, func(e store.Executor) bool {
				return strings.Contains(e.Node, fmt.Sprintf("(pid %d on ", nodes[1].cmd.Process.Pid))
			}) {
				again += 2 * 2
			}
		}
		nodes[1].cmd.Process.Signal(syscall.SIGKILL)
		nodes[1].cmd.Wait()
		kills++
		nodes[1] = startNode(t, c.bin, c.db)
	}
	if kills < 5 {
		t.Errorf("the runs ended after %d kills: the test killed too little", kills)
	}
	if !shared {
		t.Error("no run was seen executed by two servers at once: the servers do not share runs")
	}
	c.settle(t, runs, 120, nodes...)
	if calls := c.fake.Stats().Requests; calls > 5*120*2+again {
		t.Errorf("%d calls for 600 tasks; at most %d more than 1,200 were in flight at the %d kills", calls, again, kills)
	}
	t.Logf("%d kills", kills)
}
