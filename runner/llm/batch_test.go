package llm

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"assay/runner/llm/llmtest"
)

// A batch of twenty requests through the fake Batch API: polled until it
// ends, its shuffled output matched by custom_id gives each line the answer
// a live call gets; the line the server fails is an error of its own, the
// others unharmed; each line is answered once.
func TestBatchMatchesLiveCalls(t *testing.T) {
	number := regexp.MustCompile(`Q(\d+)`)
	srv := llmtest.New(func(req *llmtest.ChatRequest) llmtest.Reply {
		n, _ := strconv.Atoi(number.FindStringSubmatch(req.Messages[len(req.Messages)-1].Content)[1])
		if n == 7 {
			return llmtest.Reply{Status: http.StatusInternalServerError, Content: "the model is overloaded"}
		}
		return llmtest.Reply{Content: fmt.Sprintf("The answer to Q%d is %d.", n, 2*n), PromptTokens: 10 + n, CompletionTokens: 5}
	}, llmtest.WithBatchPolls(3), llmtest.WithFaults(0, 7))
	defer srv.Close()
	c := New(Config{BaseURL: srv.URL, Model: "m", APIKey: "sk-batch", Retry: RetryPolicy{MaxAttempts: 1}}, nil)
	ctx := context.Background()
	var lines []BatchLine
	for n := 1; n <= 20; n++ {
		lines = append(lines, BatchLine{ID: fmt.Sprintf("task-%d", n), Req: Request{Messages: []openai.ChatCompletionMessage{{Role: "user", Content: fmt.Sprintf("Q%d: what is %d + %d?", n, n, n)}}}})
	}
	b, err := c.SubmitBatch(ctx, lines, "24h")
	if err != nil {
		t.Fatal(err)
	}
	polls := 0
	for !b.Ended() {
		if b, err = c.PollBatch(ctx, b.ID); err != nil {
			t.Fatal(err)
		}
		polls++
	}
	if polls != 3 || b.Status != "completed" || b.Counts.Completed != 19 || b.Counts.Failed != 1 {
		t.Fatalf("after %d polls: %+v", polls, b)
	}
	results, err := c.BatchResults(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]BatchResult{}
	inOrder := true
	for i, r := range results {
		byID[r.ID] = r
		if r.ID != fmt.Sprintf("task-%d", i+1) {
			inOrder = false
		}
	}
	if len(byID) != 20 || inOrder {
		t.Fatalf("%d results, in the requests' order %v: the fake shuffles them", len(byID), inOrder)
	}
	for _, l := range lines {
		r := byID[l.ID]
		live, liveErr := c.Chat(ctx, l.Req)
		switch {
		case l.ID == "task-7":
			if r.Err == nil || r.Err.StatusCode != 500 || liveErr == nil {
				t.Errorf("the failed line: %+v, live %v", r, liveErr)
			}
		case r.Err != nil || liveErr != nil:
			t.Errorf("%s: batch %v, live %v", l.ID, r.Err, liveErr)
		case r.Resp.Content != live.Content || r.Resp.TokensIn != live.TokensIn || r.Resp.TokensOut != live.TokensOut:
			t.Errorf("%s: batch %q (%d in, %d out), live %q (%d, %d)", l.ID, r.Resp.Content, r.Resp.TokensIn, r.Resp.TokensOut, live.Content, live.TokensIn, live.TokensOut)
		}
	}
	if st := srv.Stats(); st.Batches != 1 || st.BatchLines != 20 {
		t.Errorf("the fake made %d batches of %d lines, want 1 of 20", st.Batches, st.BatchLines)
	}
	// Polling an ended batch again costs nothing and changes nothing.
	if again, err := c.PollBatch(ctx, b.ID); err != nil || again.Status != "completed" || srv.Stats().BatchLines != 20 {
		t.Errorf("polled again: %+v %v, %d lines answered", again, err, srv.Stats().BatchLines)
	}
}

// A batch cancelled before it ends is cancelled at the provider.
func TestBatchCancel(t *testing.T) {
	srv := llmtest.New(llmtest.Text("4"), llmtest.WithBatchPolls(5))
	defer srv.Close()
	c := New(Config{BaseURL: srv.URL, Model: "m"}, nil)
	ctx := context.Background()
	b, err := c.SubmitBatch(ctx, []BatchLine{{ID: "a", Req: Request{Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "2+2?"}}}}}, "24h")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.CancelBatch(ctx, b.ID); err != nil {
		t.Fatal(err)
	}
	if b, err = c.PollBatch(ctx, b.ID); err != nil || b.Status != "cancelled" || !b.Ended() || srv.Stats().BatchLines != 0 {
		t.Errorf("after cancelling: %+v %v", b, err)
	}
}
