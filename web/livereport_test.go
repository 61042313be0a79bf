package web_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"assay/runner/llm/llmtest"
	"assay/store"
	"assay/tally"
)

// The report under a running run's progress refreshes with each refresh of
// the progress, is answered "nothing changed" (204) while no result came, and
// shows the finished run once it ends.
func TestLiveReportKeepsUpWithTheProgress(t *testing.T) {
	release := make(chan struct{})
	agent := func(req *llmtest.ChatRequest) llmtest.Reply {
		<-release
		return llmtest.Reply{Content: "4"}
	}
	f := newRunServer(t, llmtest.JudgeAndAgent(llmtest.Judge(map[string]any{"factual_adherence": 4, "completeness": 5,
		"helpfulness_and_clarity": 3, "unverified_claims": []string{}}), agent))
	defer closeOnce(release)
	form := f.runForm(f.qaDataset(3), f.conditions("baseline"))
	form.Set("concurrency", "1")
	form.Set("repetitions", "1")
	id := f.launch(form)
	release <- struct{}{}
	waitResults(t, f.db, id, 1)

	_, doc := f.get(fmt.Sprintf("/runs/%d", id))
	trigger, _ := doc.Find("#report").Attr("hx-trigger")
	refresh, _ := doc.Find("#report").Attr("hx-get")
	if trigger != "run-progress from:body" || !strings.Contains(refresh, "since=") || !strings.Contains(refresh, "live=1") {
		t.Fatalf("a running run's report refreshes on %q from %q: want the progress's event, with its version", trigger, refresh)
	}
	resp, _ := f.get(fmt.Sprintf("/runs/%d/progress", id))
	if got := resp.Header.Get("HX-Trigger"); got != "run-progress" {
		t.Errorf("the progress fragment triggers %q", got)
	}
	if resp, _ := f.get(refresh); resp.StatusCode != http.StatusNoContent {
		t.Errorf("the report without a new result: %d, want 204", resp.StatusCode)
	}

	// A new result: the refresh brings the report with it, still live.
	release <- struct{}{}
	waitResults(t, f.db, id, 2)
	resp, doc = f.get(refresh)
	next, _ := doc.Find("#report").Attr("hx-get")
	if resp.StatusCode != http.StatusOK || next == refresh || !strings.Contains(next, "live=1") {
		t.Fatalf("after a result: %d, refresh from %q (was %q)", resp.StatusCode, next, refresh)
	}
	if got := text(doc, "#report .totals, #report"); !strings.Contains(got, "2 of 3") {
		t.Errorf("the refreshed report does not count 2 of 3 results: %q", got[:min(len(got), 300)])
	}

	// The end: the last refresh shows the finished report, which stops.
	closeOnce(release)
	f.waitFor(id, store.RunCompleted)
	resp, doc = f.get(next)
	if _, polling := doc.Find("#report").Attr("hx-trigger"); resp.StatusCode != http.StatusOK || polling {
		t.Errorf("the finished run's report: %d, still polling %v", resp.StatusCode, polling)
	}
}

// waitResults waits until the run has n results.
func waitResults(t *testing.T, db *store.DB, id int64, n int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		got, err := tally.Of(db).ResultsVersion(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if got.Count >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %d has %d results, want %d", id, got, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
