package web_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"assay/runner/llm/llmtest"
	"assay/store"
)

func TestRunFromTheFormCompletesWithASummary(t *testing.T) {
	f := newRunServer(t, rubricAgent("The answer is <script>alert(1)</script>."))
	ds := f.qaDataset(3)
	form := f.runForm(ds, f.conditions("baseline", "careful"))
	form.Set("name", `<script>alert("name")</script>`)
	id := f.launch(form)
	f.waitFor(id, store.RunCompleted)

	_, doc := f.get(fmt.Sprintf("/runs/%d", id))
	if got := text(doc, "#run-live .badge.status"); got != "completed" {
		t.Errorf("status badge %q", got)
	}
	if _, polling := doc.Find("#run-live").Attr("hx-trigger"); polling {
		t.Error("a finished run's page should not poll")
	}
	if got := text(doc, "#run-done"); got != "18 / 18" {
		t.Errorf("done %q, want 18 / 18", got)
	}
	if got := text(doc, "#agent-model") + " " + text(doc, "#judge-model"); got != "agent-model judge-model" {
		t.Errorf("models %q", got)
	}
	rows := doc.Find("#summary tbody tr")
	if rows.Length() != 2 {
		t.Fatalf("summary has %d rows, want one per condition", rows.Length())
	}
	first := rows.First().Text()
	for _, want := range []string{"baseline", "4.00", "9"} {
		if !strings.Contains(first, want) {
			t.Errorf("summary row %q lacks %q", first, want)
		}
	}
	if doc.Find("script:not([src])").Length() != 0 || !strings.Contains(doc.Find("h1").Text(), `<script>alert("name")</script>`) {
		t.Errorf("the run's name should be shown as text, not run: %d inline scripts, h1 %q", doc.Find("script:not([src])").Length(), doc.Find("h1").Text())
	}
}

func TestRunsListAndStartPage(t *testing.T) {
	f := newRunServer(t, rubricAgent("4"))
	ds := f.qaDataset(2)
	id := f.launch(f.runForm(ds, f.conditions("baseline", "careful")))
	f.waitFor(id, store.RunCompleted)

	resp, doc := f.get("/")
	if resp.Request.URL.Path != "/runs" {
		t.Fatalf("/ leads to %s, want /runs", resp.Request.URL.Path)
	}
	row := doc.Find("#runs tbody tr").First()
	for sel, want := range map[string]string{"td:nth-child(2)": "completed", "td:nth-child(3)": "12 / 12",
		"td:nth-child(5)": "qa", "td:nth-child(6)": "baseline careful"} {
		if got := strings.Join(strings.Fields(row.Find(sel).Text()), " "); !strings.Contains(got, want) {
			t.Errorf("runs list %s: %q lacks %q", sel, got, want)
		}
	}
	if href, _ := doc.Find("#new-run").Attr("href"); href != "/runs/new" {
		t.Errorf("New run button links to %q", href)
	}
	_, doc = f.get(fmt.Sprintf("/datasets/%d", ds))
	if href, _ := doc.Find("#run-dataset").Attr("href"); href != fmt.Sprintf("/runs/new?dataset=%d", ds) {
		t.Errorf("Run this dataset links to %q", href)
	}
}

func TestCancelAndResume(t *testing.T) {
	gate := make(chan struct{})
	agent := func(req *llmtest.ChatRequest) llmtest.Reply {
		<-gate
		return llmtest.Reply{Content: "4"}
	}
	f := newRunServer(t, llmtest.JudgeAndAgent(llmtest.Judge(nil), agent))
	defer closeOnce(gate)
	form := f.runForm(f.qaDataset(3), f.conditions("baseline"))
	form.Set("concurrency", "1")
	id := f.launch(form)
	f.waitFor(id, store.RunRunning)

	_, doc := f.get(fmt.Sprintf("/runs/%d/progress", id))
	if trigger, _ := doc.Find("#run-live").Attr("hx-trigger"); trigger != "every 2s" || doc.Find("#cancel").Length() != 1 {
		t.Fatalf("a running run's fragment should poll (%q) and offer Cancel", trigger)
	}
	_, doc = f.postForm(fmt.Sprintf("/runs/%d/cancel", id), url.Values{})
	if got := text(doc, "#run-live .badge.status"); got != "cancelled" || doc.Find("#resume").Length() != 1 || doc.Find("#cancel").Length() != 0 {
		t.Fatalf("after cancel: status %q, resume %d, cancel %d", got, doc.Find("#resume").Length(), doc.Find("#cancel").Length())
	}
	if _, polling := doc.Find("#run-live").Attr("hx-trigger"); polling || !strings.Contains(text(doc, "#run-message"), "Resume to do the rest") {
		t.Errorf("a cancelled run should stop polling and say how to go on: %q", text(doc, "#run-message"))
	}

	closeOnce(gate)
	f.postForm(fmt.Sprintf("/runs/%d/resume", id), url.Values{})
	f.waitFor(id, store.RunCompleted)
	results, _ := f.db.Results(context.Background(), id)
	if len(results) != 9 {
		t.Fatalf("%d results after resume, want each of 9 tasks once", len(results))
	}
	_, doc = f.postForm(fmt.Sprintf("/runs/%d/resume", id), url.Values{})
	if !strings.Contains(text(doc, ".flash.error"), "only a cancelled, failed or budget-stopped run") {
		t.Errorf("resuming a completed run: %q", text(doc, ".flash"))
	}
}

func closeOnce(ch chan struct{}) {
	select {
	case <-ch:
	default:
		close(ch)
	}
}

func TestRunUsesThePricesOfItsLaunch(t *testing.T) {
	f := newRunServer(t, rubricAgent("4"))
	f.get("/settings")
	for _, model := range []string{"agent-model", "judge-model"} {
		f.postForm("/settings/prices", url.Values{"model": {model}, "input": {"1"}, "output": {"2"}})
	}
	id := f.launch(f.runForm(f.qaDataset(2), f.conditions("baseline")))
	f.waitFor(id, store.RunCompleted)
	f.postForm("/settings/prices", url.Values{"model": {"agent-model"}, "input": {"100"}, "output": {"200"}})

	var sum struct {
		CostUSD float64 `json:"cost_usd"`
	}
	f.getJSON(fmt.Sprintf("/api/runs/%d", id), &sum)
	if sum.CostUSD <= 0 {
		t.Fatalf("cost %v: the run should have been priced at launch", sum.CostUSD)
	}
	run, _ := f.db.Run(context.Background(), id)
	if spec := run.Config; spec.Prices["agent-model"].InputPerMTok != 1 {
		t.Errorf("the run's price snapshot changed with the table: %+v", spec.Prices)
	}
	_, doc := f.get(fmt.Sprintf("/runs/%d", id))
	if got := text(doc, "#report-cost"); got == "$0" {
		t.Errorf("run page cost %q", got)
	}
}
