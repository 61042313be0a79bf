package web_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"assay/report"
	"assay/runner/llm/llmtest"
	"assay/store"
)

// A finished run with failed tasks offers to retry them (not to resume:
// nothing is left undone); retrying does them again and keeps the rest.
func TestRetryFailedTasksFromTheRunPage(t *testing.T) {
	var broken atomic.Bool
	broken.Store(true)
	f := newRunServer(t, llmtest.JudgeAndAgent(llmtest.Judge(nil), failingOn(&broken, "1 + 1")))
	id := f.launch(f.runForm(f.qaDataset(2), f.conditions("baseline")))
	f.waitFor(id, store.RunCompleted)
	_, doc := f.get(fmt.Sprintf("/runs/%d", id))
	if got := text(doc, "#retry-errors"); got != "Retry 3 failed tasks" || doc.Find("#resume").Length() != 0 {
		t.Fatalf("the run page offers %q, resume %d", got, doc.Find("#resume").Length())
	}
	broken.Store(false)
	_, doc = f.postForm(fmt.Sprintf("/runs/%d/retry-errors", id), url.Values{})
	if got := text(doc, ".flash.ok"); !strings.Contains(got, "Retrying 3 failed tasks") {
		t.Errorf("flash %q", got)
	}
	f.waitFor(id, store.RunCompleted)
	s, _ := report.Summarize(context.Background(), f.db, id)
	if s.Errors != 0 || s.Results != 6 {
		t.Errorf("after the retry: %d errors in %d results", s.Errors, s.Results)
	}
	_, doc = f.get(fmt.Sprintf("/runs/%d", id))
	if doc.Find("#retry-errors").Length() != 0 {
		t.Error("a run without failed tasks offers a retry")
	}
}

// The samples table a server showed before a retry shows the retried
// results after it, even when the one result retried takes the id of the
// failed one it replaces (the last stored): the run's count of results and
// its last id are then what they were before the retry.
func TestSamplesTableAfterTheLastTaskIsRetried(t *testing.T) {
	var broken atomic.Bool
	broken.Store(true)
	f := newRunServer(t, llmtest.JudgeAndAgent(llmtest.Judge(nil), failingOn(&broken, "2 + 2")))
	form := f.runForm(f.qaDataset(2), f.conditions("baseline"))
	form.Set("repetitions", "1")
	form.Set("concurrency", "1")
	id := f.launch(form)
	f.waitFor(id, store.RunCompleted)
	table := fmt.Sprintf("/runs/%d/samples", id)
	_, doc := f.get(table)
	if n := doc.Find("td.num.bad").Length(); n != 1 {
		t.Fatalf("the samples table shows %d rows with errors, want 1", n)
	}
	broken.Store(false)
	f.postForm(fmt.Sprintf("/runs/%d/retry-errors", id), url.Values{})
	f.waitFor(id, store.RunCompleted)
	_, doc = f.get(table)
	if n := doc.Find("td.num.bad").Length(); n != 0 {
		t.Errorf("after the retry, the samples table shows %d rows with errors", n)
	}
}

// failingOn is an agent that answers "4", but a quota error to the
// question holding text while broken is set.
func failingOn(broken *atomic.Bool, text string) llmtest.Handler {
	return func(req *llmtest.ChatRequest) llmtest.Reply {
		if broken.Load() && strings.Contains(req.Messages[len(req.Messages)-1].Content, text) {
			return llmtest.Reply{Status: 400, Content: "quota exceeded"}
		}
		return llmtest.Reply{Content: "4"}
	}
}
