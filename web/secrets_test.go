package web_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"assay/runner/llm/llmtest"
	"assay/store"
)

// A provider (or a proxy before it) that echoes the key it was sent — in a
// retryable error, in the answer, in the judge's reasoning and claims —
// must not get the key into any page, export or share link: each shows
// "[redacted]" where the key was.
func TestAKeyEchoedByTheProviderIsShownNowhere(t *testing.T) {
	const key = "sk-echo-7f3a9c2e4b1d8a6f0c5e"
	t.Setenv("ASSAY_ECHO_KEY", key)
	sent := func(req *llmtest.ChatRequest) string { return req.Header.Get("Authorization") }
	var agentCalls atomic.Int64
	agent := func(req *llmtest.ChatRequest) llmtest.Reply {
		if agentCalls.Add(1)%2 == 1 { // every task's first attempt
			return llmtest.Reply{Status: 500, Body: `{"error": {"message": "upstream failed for key ` + sent(req) + `"}}`}
		}
		return llmtest.Reply{Content: "The answer is 4 (asked with " + sent(req) + ")."}
	}
	judge := func(req *llmtest.ChatRequest) llmtest.Reply {
		answer, _ := llmtest.JudgeAnswer(req, map[string]any{"factual_adherence": 4, "completeness": 5,
			"helpfulness_and_clarity": 3, "factual_adherence_reasoning": "The caller's key was " + sent(req),
			"unverified_claims": []string{"the key " + sent(req) + " is valid"}})
		return llmtest.Reply{Content: answer}
	}
	f := newRunServer(t, llmtest.JudgeAndAgent(judge, agent))
	form := f.runForm(f.qaDataset(2), f.conditions("baseline"))
	form.Set("agent_key_env", "ASSAY_ECHO_KEY")
	form.Set("judge_key_env", "ASSAY_ECHO_KEY")
	form.Set("concurrency", "1")
	form.Set("repetitions", "1")
	id := f.launch(form)
	f.waitFor(id, store.RunCompleted)
	if got := f.fake.Requests()[0].Header.Get("Authorization"); got != "Bearer "+key {
		t.Fatalf("the key was not sent: %q", got)
	}

	results, err := f.db.Results(context.Background(), id)
	if err != nil || len(results) != 2 {
		t.Fatalf("%d results: %v", len(results), err)
	}
	if len(results[0].Retries) != 1 || !strings.Contains(results[0].Retries[0], "upstream failed for key Bearer [redacted]") {
		t.Fatalf("the retry should be kept with the key redacted: %q", results[0].Retries)
	}

	_, doc := f.get(fmt.Sprintf("/runs/%d", id))
	_, doc = f.postForm(fmt.Sprintf("/runs/%d/shares", id), url.Values{})
	link, _ := doc.Find("#new-link input").Attr("value")
	share := strings.TrimPrefix(link, f.srv.URL)
	if !strings.HasPrefix(share, "/r/") {
		t.Fatalf("no share link: %q", link)
	}
	sample := results[0].SampleRow
	owner := []string{
		fmt.Sprintf("/runs/%d", id), fmt.Sprintf("/runs/%d/report", id), fmt.Sprintf("/runs/%d/samples", id),
		fmt.Sprintf("/runs/%d/samples/%d", id, sample), fmt.Sprintf("/runs/%d/export.json", id),
		fmt.Sprintf("/runs/%d/export.csv", id), fmt.Sprintf("/runs/%d/export.html", id),
		fmt.Sprintf("/api/runs/%d", id), fmt.Sprintf("/runs/%d/progress", id),
	}
	shared := []string{share, share + "/report", share + "/samples", fmt.Sprintf("%s/samples/%d", share, sample), share + "/export.html"}
	for _, path := range owner {
		resp, err := f.http.Get(f.srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body := readAll(t, resp)
		if resp.StatusCode != 200 {
			t.Errorf("%s: %d", path, resp.StatusCode)
		}
		if strings.Contains(body, key) || strings.Contains(body, key[3:]) {
			t.Errorf("%s shows the key", path)
		}
	}
	var redacted int
	for _, path := range shared {
		code, body := stranger(t, f.browser, path)
		if code != 200 {
			t.Errorf("%s: %d", path, code)
		}
		if strings.Contains(body, key) {
			t.Errorf("%s shows the key to anyone with the link", path)
		}
		redacted += strings.Count(body, "[redacted]")
	}
	code, body := stranger(t, f.browser, fmt.Sprintf("%s/samples/%d", share, sample))
	for _, want := range []string{"upstream failed for key Bearer [redacted]", "asked with Bearer [redacted]",
		"The caller&#39;s key was Bearer [redacted]", "the key Bearer [redacted] is valid"} {
		if code != 200 || !strings.Contains(body, want) {
			t.Errorf("the shared sample page should show %q", want)
		}
	}
	if redacted == 0 {
		t.Error("no page shows where a key was redacted")
	}
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
