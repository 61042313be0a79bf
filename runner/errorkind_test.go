package runner_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"assay/config"
	"assay/report"
	"assay/runner/llm/llmtest"
	"assay/store"
)

// Each way an answer or a judgement can fail is stored with its kind, and
// the summary counts the errors by kind.
func TestErrorsAreCountedByKind(t *testing.T) {
	cases := []struct {
		name      string
		agent     llmtest.Reply
		judge     llmtest.Reply
		extra     string
		want      map[store.ErrorKind]int // agent errors
		judgeWant map[store.ErrorKind]int
	}{
		{name: "rate limited", agent: llmtest.Reply{Status: 429, RetryAfter: "0"}, want: map[store.ErrorKind]int{store.ErrorRateLimited: 2}},
		{name: "server error", agent: llmtest.Reply{Status: 503}, want: map[store.ErrorKind]int{store.ErrorServer: 2}},
		{name: "refused", agent: llmtest.Reply{Status: 401, Content: "bad key"}, want: map[store.ErrorKind]int{store.ErrorRefused: 2}},
		{name: "dropped", agent: llmtest.Reply{Drop: true}, want: map[store.ErrorKind]int{store.ErrorConnection: 2}},
		{name: "malformed", agent: llmtest.Reply{Body: `{"choices": "no"}`}, want: map[store.ErrorKind]int{store.ErrorBadResponse: 2}},
		{name: "deadline", agent: llmtest.Reply{Hang: true}, extra: "agent_timeout", want: map[store.ErrorKind]int{store.ErrorTimeout: 2}},
		{name: "judge unusable", agent: llmtest.Reply{Content: "4"}, judge: llmtest.Reply{Content: "I think it is fine."},
			judgeWant: map[store.ErrorKind]int{store.ErrorBadResponse: 2}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := func(req *llmtest.ChatRequest) llmtest.Reply {
				if _, _, judge := req.Schema(); judge || strings.Contains(req.System(), "rubric") {
					if tc.judge.Content != "" {
						return tc.judge
					}
					return llmtest.Judge(nil)(req)
				}
				return tc.agent
			}
			f := newFixture(t, h)
			yaml := fmt.Sprintf(`dataset: {path: %q}
agent: {type: openai, model: m, base_url: %q, timeout_seconds: 1}
judge: {model: j, base_url: %q}
conditions: {baseline: {}}
execution: {num_repetitions: 2, retry: {max_attempts: 1}}
`, f.qaDataset(1), f.srv.URL, f.srv.URL)
			cfg, err := config.Parse([]byte(yaml), "run.yaml", f.dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			run := f.launch(cfg)
			if _, err := f.m.Execute(context.Background(), run.ID); err != nil {
				t.Fatal(err)
			}
			s, err := report.Summarize(context.Background(), f.db, run.ID)
			if err != nil {
				t.Fatal(err)
			}
			c := s.Conditions[0]
			if fmt.Sprint(c.ErrorKinds) != fmt.Sprint(nilIfEmpty(tc.want)) || fmt.Sprint(c.JudgeErrorKinds) != fmt.Sprint(nilIfEmpty(tc.judgeWant)) {
				results, _ := f.db.Results(context.Background(), run.ID)
				t.Fatalf("kinds %v / judge %v, want %v / %v; first result %q %q", c.ErrorKinds, c.JudgeErrorKinds, tc.want, tc.judgeWant,
					results[0].Error, results[0].ErrorKind)
			}
		})
	}
}

func nilIfEmpty(m map[store.ErrorKind]int) map[store.ErrorKind]int {
	if len(m) == 0 {
		return nil
	}
	return m
}
