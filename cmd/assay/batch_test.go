package main

import (
	"encoding/json"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"assay/internal/pgtest"
	"assay/runner/llm/llmtest"
)

// assay run SIGKILLed while its judge calls' batch is under way: started
// again with --resume it polls the batch it kept, sends no line twice and
// makes no judge call live; --json counts the batched calls and lists the
// batch.
func TestKilledWhileItsBatchIsUnderWay(t *testing.T) {
	bin := buildBinary(t)
	srv := llmtest.New(llmtest.JudgeAndAgent(llmtest.Judge(nil), llmtest.Text("The answer is 4.")), llmtest.WithLatency(5*time.Millisecond))
	t.Cleanup(srv.Close)
	srv.HoldBatches(true)
	cfgPath := writeRunFile(t, srv, "execution: {num_repetitions: 2, max_concurrent: 4}\nbatch: {judge: true, gather: 50ms, poll: 20ms}")
	dbPath := pgtest.Database(t)

	cmd := exec.Command(bin, "run", "--quiet", "--config", cfgPath, "--db", dbPath)
	var said strings.Builder
	cmd.Stdout, cmd.Stderr = &said, &said
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := 0
	for deadline := time.Now().Add(60 * time.Second); lines < 40; time.Sleep(20 * time.Millisecond) {
		// Each line's id is quoted in the JSON array of its batch's lines.
		readRaw(dbPath, `SELECT coalesce(sum(length(lines) - length(replace(lines, '"', ''))), 0) / 2 FROM run_batches WHERE run_id = 1`, &lines)
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("%d of 40 lines kept in batches; assay run said:\n%s", lines, said.String())
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	batches, agentCalls := srv.Stats().Batches, srv.Stats().Requests
	if n := countResults(t, dbPath); n != 0 {
		t.Fatalf("%d results saved before the batch ended", n)
	}

	srv.HoldBatches(false)
	out, err := exec.Command(bin, "run", "--resume", "1", "--json", "--db", dbPath).Output()
	if err != nil {
		t.Fatalf("resume: %v\n%s", err, out)
	}
	checkExactlyOnce(t, dbPath, 40)
	st := srv.Stats()
	if st.Batches != batches || st.BatchLines != 40 {
		t.Errorf("%d batches of %d lines; want the %d sent before the kill, their 40 lines each answered once", st.Batches, st.BatchLines, batches)
	}
	if st.Requests != agentCalls {
		t.Errorf("the resumed run made %d calls live; want none: the answers were kept, the judgements in the batch", st.Requests-agentCalls)
	}
	var sum struct {
		Conditions []struct {
			Name         string `json:"name"`
			BatchedCalls *int   `json:"batched_calls"`
		} `json:"conditions"`
		Batches []struct {
			ID       string `json:"id"`
			Provider string `json:"provider"`
			Status   string `json:"status"`
			Lines    int    `json:"lines"`
		} `json:"batches"`
	}
	if err := json.Unmarshal(out, &sum); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for _, c := range sum.Conditions {
		if c.BatchedCalls == nil || *c.BatchedCalls != 20 {
			t.Errorf("condition %s: batched_calls %v, want 20", c.Name, c.BatchedCalls)
		}
	}
	total := 0
	for _, b := range sum.Batches {
		total += b.Lines
		if b.Provider != "openai" || b.Status != "completed" || !strings.HasPrefix(b.ID, "batch_") {
			t.Errorf("batch %+v", b)
		}
	}
	if len(sum.Batches) != batches || total != 40 {
		t.Errorf("--json lists %d batches of %d lines; want %d of 40", len(sum.Batches), total, batches)
	}
}
