package web_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"assay/store"
	"assay/web"
)

// A run whose `assay run` was killed on another machine, and whose key this
// server lacks: its page says it was interrupted, by whom, and what resuming
// it needs; no ETA. Resuming a stopped run without the key is refused the same way.
func TestARunWhoseProcessStoppedIsShownInterrupted(t *testing.T) {
	b, db := newServer(t, web.Config{})
	id, _ := handRunIn(t, db, store.RunRunning)
	cli := store.Holder{ID: "cli-1", Host: "ci-runner-7", PID: 4242, Program: "assay run"}
	if err := db.AcquireLease(context.Background(), id, cli, time.Nanosecond, func(store.Holder) bool { return true }); err != nil {
		t.Fatal(err)
	}
	_, list := b.get("/runs")
	if got := text(list, "#runs tbody .badge.status"); got != "interrupted" {
		t.Errorf("the list of runs reads %q", got)
	}
	_, doc := b.get(fmt.Sprintf("/runs/%d/progress", id))
	msg := text(doc, "#run-interrupted")
	if got := text(doc, "#run-live .badge.status"); got != "interrupted" || doc.Find("#eta").Length() != 0 {
		t.Errorf("badge %q, ETA shown %v", got, doc.Find("#eta").Length() != 0)
	}
	for _, want := range []string{"assay run (pid 4242 on ci-runner-7)", "cannot take it over", "AGENT_KEY_VARIABLE (agent.api_key_env)",
		fmt.Sprintf("assay run --resume %d", id)} {
		if !strings.Contains(msg, want) {
			t.Errorf("the message lacks %q: %q", want, msg)
		}
	}

	if err := db.SetRunStatus(context.Background(), id, store.RunCancelled, "cancelled"); err != nil {
		t.Fatal(err)
	}
	_, doc = b.postForm(fmt.Sprintf("/runs/%d/resume", id), url.Values{})
	if got := text(doc, ".flash.error"); !strings.Contains(got, "Not resumed") || !strings.Contains(got, "AGENT_KEY_VARIABLE") {
		t.Errorf("resume without the key: %q", got)
	}
	if run, _ := db.Run(context.Background(), id); run.Status != store.RunCancelled {
		t.Errorf("the run is %s after a refused resume", run.Status)
	}
}
