package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// A server asked to stop while it replays routing over a large run — work
// a request started and left running — stops it, and ends within 5 s with
// no goroutine of its left behind.
func TestServeStopsItsBackgroundWork(t *testing.T) {
	var data strings.Builder
	for i := 1; i <= 1000; i++ {
		fmt.Fprintf(&data, "{\"question\": \"Question %d: what is %d + %d?\", \"answer\": \"Add them.\\n#### %d\"}\n", i, i, i, 2*i)
	}
	questions := filepath.Join(t.TempDir(), "gsm8k.jsonl")
	os.WriteFile(questions, []byte(data.String()), 0o644)
	path, id := routedRun(t, questions)

	ignore := goleak.IgnoreCurrent()
	base, stop := serve(t, "--db", path)
	client := &http.Client{}
	// The page waits two seconds for the replay (2,000 orders of 1,000
	// samples: longer), then says it is under way.
	resp, err := client.Get(fmt.Sprintf("%s/runs/%d/routing?orders=2000&seed=3", base, id))
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	client.CloseIdleConnections()
	if !strings.Contains(string(page), `id="routing-pending"`) {
		t.Fatal("the replay was over before the server was stopped: the test tests nothing")
	}
	start := time.Now()
	stop()
	took := time.Since(start)
	t.Logf("stopped in %s", took)
	if took > 5*time.Second {
		t.Errorf("the server took %s to stop during a replay, want under 5 s", took)
	}
	goleak.VerifyNone(t, ignore)
}
