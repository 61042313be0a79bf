package web_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"assay/internal/pgtest"
	"assay/runner/llm/llmtest"
	"assay/store"
	"assay/tally"
	"assay/web"
)

// TestFullDiskPausesTheRun fills the database while a run writes: the run
// pauses with the reason on its page, keeps everything it had saved, and
// goes on by itself once there is room, to a complete run.
func TestFullDiskPausesTheRun(t *testing.T) {
	pgtest.SQLiteOnly(t, "a database file's disk filling up")
	var answered atomic.Int64
	held := make(chan struct{})
	var release sync.Once
	big := strings.Repeat("A long answer that needs room. ", 600) // ~18 KB: every result needs new pages
	agent := func(req *llmtest.ChatRequest) llmtest.Reply {
		if answered.Add(1) > 6 {
			<-held
		}
		return llmtest.Reply{Content: big}
	}
	f := newRunServer(t, llmtest.JudgeAndAgent(llmtest.Judge(map[string]any{"factual_adherence": 4, "completeness": 5,
		"helpfulness_and_clarity": 3, "unverified_claims": []string{}}), agent))
	defer release.Do(func() { close(held) })
	ds := f.qaDataset(8)
	form := f.runForm(ds, f.conditions("c"))
	form.Set("repetitions", "2")
	form.Set("concurrency", "2")
	id := f.launch(form)
	ctx := context.Background()
	done := func() int {
		p, _ := tally.Of(f.db).RunProgress(ctx, id)
		if len(p) == 0 {
			return 0
		}
		return p[0].Done
	}
	for done() < 5 || answered.Load() <= 6 {
	}
	pages, err := f.db.PageCount(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.db.LimitPages(ctx, pages); err != nil {
		t.Fatal(err)
	}
	before := done()
	release.Do(func() { close(held) })

	progress := func() string {
		resp, err := f.http.Get(f.srv.URL + fmt.Sprintf("/runs/%d/progress", id))
		if err != nil {
			t.Fatal(err)
		}
		return f.read(resp).Text()
	}
	for !strings.Contains(progress(), "Paused: the database cannot be written") {
		if run, _ := f.db.Run(ctx, id); run.Status.Finished() {
			t.Fatalf("the run ended %s (%s) instead of pausing", run.Status, run.Message)
		}
	}
	page := progress()
	if !strings.Contains(page, "full") || !strings.Contains(page, "Nothing already saved is lost") {
		t.Errorf("the pause does not say why: %s", page)
	}
	run, _ := f.db.Run(ctx, id)
	if run.Status != store.RunRunning || done() < before {
		t.Errorf("while paused: %s with %d results, had %d", run.Status, done(), before)
	}

	if err := f.db.LimitPages(ctx, 0); err != nil {
		t.Fatal(err)
	}
	run = f.waitFor(id, store.RunCompleted, store.RunFailed)
	if run.Status != store.RunCompleted || done() != 16 {
		t.Fatalf("after room was made: %s (%s) with %d of 16 results", run.Status, run.Message, done())
	}
	if strings.Contains(progress(), "Paused") {
		t.Error("the page still says paused")
	}
}

// A run another process executes cannot record in a full database that it
// is paused; its page says so from the disk itself, and stops saying so
// once there is room.
func TestFullDiskShownForARunExecutedElsewhere(t *testing.T) {
	pgtest.SQLiteOnly(t, "a database file's disk filling up")
	b, db := newServer(t, web.Config{})
	id, _ := handRunIn(t, db, store.RunRunning)
	cli := store.Holder{ID: "cli-1", Host: "ci-runner-7", PID: 4242, Program: "assay run"}
	if err := db.AcquireLease(context.Background(), id, cli, time.Hour, func(store.Holder) bool { return true }); err != nil {
		t.Fatal(err)
	}
	page := func() string {
		_, doc := b.get(fmt.Sprintf("/runs/%d/progress", id))
		return text(doc, "#run-paused")
	}
	if got := page(); got != "" {
		t.Fatalf("paused with room on the disk: %q", got)
	}
	defer web.SetDiskFree(300 << 10)()
	got := page()
	for _, want := range []string{"Paused", "300.0 KiB left", "cannot save its results", "Nothing already saved is lost"} {
		if !strings.Contains(got, want) {
			t.Errorf("the pause lacks %q: %q", want, got)
		}
	}
	web.SetDiskFree(8 << 30)
	if got := page(); got != "" {
		t.Errorf("still paused once there is room: %q", got)
	}
}
