package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"assay"
	"assay/runner/llm/llmtest"
	"assay/store"
)

// A condition that failed every task fails the run; the run page says which
// and lists the most common messages, with a link to the failed samples.
func TestFailuresAreInPlainSight(t *testing.T) {
	agent := func(req *llmtest.ChatRequest) llmtest.Reply {
		if strings.Contains(req.Messages[0].Content, "Use the docs") {
			return llmtest.Reply{Status: 404, Content: "model agent-model does not exist"}
		}
		return llmtest.Reply{Content: "4"}
	}
	f := newRunServer(t, llmtest.JudgeAndAgent(llmtest.Judge(nil), agent))
	var ids []string
	for _, c := range []*assay.Condition{{Name: "baseline", SystemPrompt: "Answer briefly."},
		{Name: "with-docs", SystemPrompt: "Use the docs."}} {
		c.MCPServers = []assay.MCPServer{}
		if err := f.db.CreateCondition(context.Background(), c); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, strconv.FormatInt(c.ID, 10))
	}
	form := f.runForm(f.qaDataset(3), ids)
	form.Set("repetitions", "2")
	id := f.launch(form)
	run := f.waitFor(id, store.RunCompleted, store.RunFailed)
	if run.Status != store.RunFailed || !strings.Contains(run.Message, `every one of 6 tasks under "with-docs" failed`) {
		t.Fatalf("the run ended %s: %q", run.Status, run.Message)
	}
	_, doc := f.get(fmt.Sprintf("/runs/%d", id))
	if msg := text(doc, "#run-message"); !strings.Contains(msg, "with-docs") || !strings.Contains(msg, "does not exist") {
		t.Errorf("the run page's message: %q", msg)
	}
	top := doc.Find("#top-errors .top-errors")
	if top.Length() != 1 || !strings.Contains(top.Find("li").First().Text(), "6×") ||
		!strings.Contains(top.Find("li .message").First().Text(), "model agent-model does not exist") {
		t.Fatalf("most common errors: %q", strings.Join(strings.Fields(top.Text()), " "))
	}
	link, _ := top.Find("a").Attr("href")
	_, samples := f.get(link)
	if got := text(samples, "#sample-count"); !strings.HasPrefix(got, "3 of 6") {
		t.Errorf("the failed samples' link %s shows %q", link, got)
	}
}

// A run that completes with failed judge calls does not look fine: its
// badge says "completed with errors" in its own colour, and its message
// counts the judge calls that failed. "Retry" then judges those answers
// again — the answers are not asked for again, the judge calls that
// succeeded are not made again — and the run ends without an error.
func TestARunWithJudgeErrorsIsNotShownAsFineAndIsJudgedAgain(t *testing.T) {
	var refusing atomic.Bool
	refusing.Store(true)
	var agentCalls, judgeCalls atomic.Int64
	judge := func(req *llmtest.ChatRequest) llmtest.Reply {
		judgeCalls.Add(1)
		if refusing.Load() && strings.Contains(req.LastUser(), "What is 1 + 1?") { // its three repetitions' judge calls
			return llmtest.Reply{Status: 401, Content: "the judge's key was refused"}
		}
		answer, _ := llmtest.JudgeAnswer(req, map[string]any{"factual_adherence": 4, "completeness": 5,
			"helpfulness_and_clarity": 3, "unverified_claims": []string{}})
		return llmtest.Reply{Content: answer}
	}
	agent := func(req *llmtest.ChatRequest) llmtest.Reply {
		agentCalls.Add(1)
		return llmtest.Reply{Content: "An answer."}
	}
	f := newRunServer(t, llmtest.JudgeAndAgent(judge, agent))
	form := f.runForm(f.qaDataset(3), f.conditions("baseline"))
	form.Set("concurrency", "1")
	id := f.launch(form)
	f.waitFor(id, store.RunCompleted)
	_, doc := f.get(fmt.Sprintf("/runs/%d", id))
	if got := text(doc, "#run-live .badge.st-completed_with_errors"); got != "completed with errors" {
		t.Errorf("badge %q", text(doc, "#run-live .badge"))
	}
	if msg := doc.Find("#run-message.warn").Text(); !strings.Contains(msg, "Completed with errors: 3 judge calls ended in an error") {
		t.Errorf("message %q", doc.Find("#run-message").Text())
	}
	if got := text(doc, "#retry-errors"); got != "Retry 3 failed judge calls" {
		t.Fatalf("retry button %q", got)
	}
	before, _ := f.db.Results(context.Background(), id)
	agentBefore, judgeBefore := agentCalls.Load(), judgeCalls.Load()

	refusing.Store(false)
	_, doc = f.postForm(fmt.Sprintf("/runs/%d/retry-errors", id), url.Values{})
	if flash := text(doc, ".flash"); !strings.Contains(flash, "Retrying the judging of 3 answers") {
		t.Errorf("flash %q", flash)
	}
	f.waitFor(id, store.RunCompleted)
	if n := agentCalls.Load() - agentBefore; n != 0 {
		t.Errorf("%d agent calls: the answers judged again were asked for again", n)
	}
	if n := judgeCalls.Load() - judgeBefore; n != 3 {
		t.Errorf("%d judge calls, want the 3 that failed", n)
	}
	after, _ := f.db.Results(context.Background(), id)
	if len(after) != len(before) {
		t.Fatalf("%d results, were %d", len(after), len(before))
	}
	for _, r := range after {
		if len(r.Judgements) != 1 || r.Judgements[0].Error != "" || len(r.Judgements[0].Scores) != 3 || r.Response != "An answer." {
			t.Errorf("result %s/%d after the retry: %q, %+v", r.Condition, r.Repetition, r.Response, r.Judgements)
		}
	}
	_, doc = f.get(fmt.Sprintf("/runs/%d", id))
	if got := text(doc, "#run-live .badge"); got != "completed" || doc.Find("#retry-errors").Length() != 0 {
		t.Errorf("after the retry: badge %q, retry button %d", got, doc.Find("#retry-errors").Length())
	}
}

// While calls hang, the live page says how many are in flight and for how
// long, rather than only an estimate of the time left.
func TestTheLivePageSaysWhatIsInFlight(t *testing.T) {
	f := newRunServer(t, llmtest.JudgeAndAgent(llmtest.Judge(nil), func(*llmtest.ChatRequest) llmtest.Reply {
		return llmtest.Reply{Hang: true}
	}))
	form := f.runForm(f.qaDataset(4), f.conditions("baseline"))
	form.Set("concurrency", "2")
	id := f.launch(form)
	deadline := time.Now().Add(60 * time.Second)
	var got string
	for !strings.Contains(got, "2 calls in flight, the oldest for") {
		_, doc := f.get(fmt.Sprintf("/runs/%d/progress", id))
		got = text(doc, "#in-flight")
		if time.Now().After(deadline) {
			t.Fatalf("in flight: %q", got)
		}
		time.Sleep(20 * time.Millisecond)
	}
	f.postForm(fmt.Sprintf("/runs/%d/cancel", id), url.Values{})
	f.waitFor(id, store.RunCancelled)
	if _, doc := f.get(fmt.Sprintf("/runs/%d/progress", id)); doc.Find("#in-flight").Length() != 0 {
		t.Errorf("a cancelled run still shows calls in flight: %q", text(doc, "#in-flight"))
	}
}

// A judge's temperature above 0 is warned of before launch, as k-eval warns.
func TestTheEstimateWarnsOfAWarmJudge(t *testing.T) {
	f := newRunServer(t, rubricAgent("An answer."))
	form := f.runForm(f.qaDataset(2), f.conditions("baseline"))
	form.Set("judge_temperature", "0.7")
	_, doc := f.postForm("/runs/estimate", form)
	if got := text(doc, ".run-warning"); !strings.Contains(got, "judge.temperature is 0.7: above 0 the judge scores the same answer differently") {
		t.Errorf("warning %q", got)
	}
	form.Set("judge_temperature", "0")
	if _, doc := f.postForm("/runs/estimate", form); doc.Find(".run-warning").Length() != 0 {
		t.Errorf("a judge at 0 is warned of: %q", text(doc, ".run-warning"))
	}
}

// A run meeting its provider's rate limit says so on its live page: where
// each endpoint's adaptive limit stands, and how many of its calls were
// answered 429.
func TestTheLivePageShowsTheRateLimit(t *testing.T) {
	var agentCalls atomic.Int64
	fake := llmtest.New(llmtest.JudgeAndAgent(func(*llmtest.ChatRequest) llmtest.Reply {
		return llmtest.Reply{Hang: true}
	}, func(*llmtest.ChatRequest) llmtest.Reply {
		if agentCalls.Add(1) <= 2 {
			return llmtest.Reply{Status: http.StatusTooManyRequests, RetryAfter: "0", Content: "Rate limit reached"}
		}
		return llmtest.Reply{Content: "An answer."}
	}))
	f := newRunServerOn(t, fake)
	form := f.runForm(f.qaDataset(4), f.conditions("baseline"))
	form.Set("concurrency", "4")
	id := f.launch(form)
	deadline := time.Now().Add(60 * time.Second)
	var got string
	for !strings.Contains(got, "2 calls of this run answered 429") {
		_, doc := f.get(fmt.Sprintf("/runs/%d/progress", id))
		got = text(doc, "#rate-limits")
		if time.Now().After(deadline) {
			t.Fatalf("rate limits on the live page: %q", got)
		}
		time.Sleep(20 * time.Millisecond)
	}
	host := strings.TrimPrefix(strings.TrimSuffix(fake.URL, "/v1"), "http://")
	if !regexp.MustCompile(regexp.QuoteMeta(host) + `: [0-4] at once, up to [1-4] now`).MatchString(got) {
		t.Errorf("rate limits on the live page: %q, want the endpoint %s named", got, host)
	}
	f.postForm(fmt.Sprintf("/runs/%d/cancel", id), url.Values{})
	f.waitFor(id, store.RunCancelled)
	if _, doc := f.get(fmt.Sprintf("/runs/%d/progress", id)); doc.Find("#rate-limits").Length() != 0 {
		t.Errorf("a cancelled run still shows its limits: %q", text(doc, "#rate-limits"))
	}
}
