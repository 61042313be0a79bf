package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"assay/internal/pgtest"
	"assay/runner/llm/llmtest"
	"assay/store"
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

// Three servers on one database: conditions made on one, runs launched on
// each, every page read from any; the server executing a run killed, twice,
// and started again: another server (or it, restarted) takes the run over
// and every task ends once, no call made again beyond those in flight,
// and the report of every run is the same from every server.
func TestServersShareOneDatabase(t *testing.T) {
	ctx := context.Background()
	bin := buildBinary(t)
	fake := llmtest.New(varied(), llmtest.WithLatency(40*time.Millisecond))
	t.Cleanup(fake.Close)
	db := pgtest.Database(t)
	dir := t.TempDir()
	var data strings.Builder
	for i := 1; i <= 10; i++ {
		fmt.Fprintf(&data, "{\"id\": \"q%d\", \"question\": \"What is %d + %d?\", \"answer\": \"%d\"}\n", i, i, i, 2*i)
	}
	os.WriteFile(filepath.Join(dir, "qa.jsonl"), []byte(data.String()), 0o644)
	if err := run(ctx, []string{"import", "--file", filepath.Join(dir, "qa.jsonl"), "--db", db}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	nodes := []*node{startNode(t, bin, db), startNode(t, bin, db), startNode(t, bin, db)}
	for i, name := range []string{"a", "b"} {
		if code, b := nodes[i].call(t, "POST", "/api/conditions", map[string]any{"name": name, "system_prompt": "Answer " + name}); code != 201 {
			t.Fatalf("condition %s: %d %s", name, code, b)
		}
	}
	var runs []int64
	for _, n := range nodes {
		code, b := n.call(t, "POST", "/api/runs", map[string]any{"dataset_id": 1, "conditions": []string{"a", "b"},
			"run": map[string]any{"agent": map[string]any{"type": "openai", "model": "m", "base_url": fake.URL},
				"judge": map[string]any{"model": "j", "base_url": fake.URL}, "execution": map[string]any{"num_repetitions": 3, "max_concurrent": 2}}})
		var launched struct {
			RunID int64 `json:"run_id"`
		}
		if json.Unmarshal(b, &launched); code != 201 || launched.RunID == 0 {
			t.Fatalf("launch on %s: %d %s", n.url, code, b)
		}
		runs = append(runs, launched.RunID)
	}
	results := func(id int64) int {
		s, _ := store.Open(ctx, db)
		defer s.Close()
		r, _ := s.Results(ctx, id)
		return len(r)
	}
	// The servers that launched the second and third runs are killed while
	// they execute them, and started again.
	for k, i := range []int{1, 2} {
		for deadline := time.Now().Add(time.Minute); results(runs[i]) < 5; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("run %d made no progress", runs[i])
			}
		}
		// Another server says who executes the run, and how far it got.
		_, b := nodes[0].call(t, "GET", fmt.Sprintf("/api/runs/%d", runs[i]), nil)
		var r struct {
			Executors []store.Executor `json:"executors"`
		}
		json.Unmarshal(b, &r)
		if len(r.Executors) != 1 || !strings.Contains(r.Executors[0].Node, fmt.Sprintf("assay serve (pid %d on ", nodes[i].cmd.Process.Pid)) ||
			r.Executors[0].TasksDone < 5 || !r.Executors[0].LeaseUntil.After(time.Now().Add(-time.Minute)) {
			t.Errorf("run %d's executors, from another server: %s", runs[i], b)
		}
		if _, page := nodes[0].call(t, "GET", fmt.Sprintf("/runs/%d/progress", runs[i]), nil); !bytes.Contains(page,
			fmt.Appendf(nil, `id="executor">Executed by assay serve (pid %d on `, nodes[i].cmd.Process.Pid)) {
			t.Errorf("run %d's live page, on another server, does not name its executor: %.2000s", runs[i], page)
		}
		nodes[i].cmd.Process.Signal(syscall.SIGKILL)
		nodes[i].cmd.Wait()
		if k == 0 {
			nodes[i] = startNode(t, bin, db)
		}
	}
	for _, id := range runs {
		for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
			_, b := nodes[0].call(t, "GET", fmt.Sprintf("/api/runs/%d", id), nil)
			var r struct {
				Status string `json:"status"`
			}
			json.Unmarshal(b, &r)
			if r.Status == "completed" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("run %d is %s after two minutes", id, r.Status)
			}
		}
	}
	s, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, id := range runs {
		rs, _ := s.Results(ctx, id)
		seen := map[store.TaskKey]int{}
		for _, r := range rs {
			seen[store.TaskKey{SampleRow: r.SampleRow, Condition: r.Condition, Repetition: r.Repetition}]++
			if len(r.Judgements) != 1 {
				t.Errorf("run %d result %d has %d judgements", id, r.ID, len(r.Judgements))
			}
		}
		if len(rs) != 60 || len(seen) != 60 {
			t.Errorf("run %d: %d results for %d tasks, want 60 once each", id, len(rs), len(seen))
		}
	}
	// Each kill may cost the calls in flight again: two tasks, an agent's
	// and a judge's call each.
	if calls := fake.Stats().Requests; calls > 3*60*2+2*2*2 {
		t.Errorf("%d calls for 180 tasks", calls)
	}
	live := []*node{nodes[0], nodes[1]}
	for _, id := range runs {
		if _, b := live[0].call(t, "GET", fmt.Sprintf("/api/runs/%d", id), nil); bytes.Contains(b, []byte(`"executors"`)) {
			t.Errorf("a completed run lists executors: %s", b)
		}
		_, want := live[0].call(t, "GET", fmt.Sprintf("/api/runs/%d/report", id), nil)
		for _, n := range live[1:] {
			if _, got := n.call(t, "GET", fmt.Sprintf("/api/runs/%d/report", id), nil); !bytes.Equal(got, want) {
				t.Errorf("run %d's report differs between servers:\n%.300s\n%.300s", id, got, want)
			}
		}
	}
}
