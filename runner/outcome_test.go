package runner_test

import (
	"context"
	"strings"
	"testing"

	"assay/report"
	"assay/runner/llm/llmtest"
	"assay/store"
)

// A condition whose every task failed fails the run, whose message names the
// condition and its most common error; the summary lists the messages.
func TestAConditionThatFailedEveryTaskFailsTheRun(t *testing.T) {
	agent := func(req *llmtest.ChatRequest) llmtest.Reply {
		if strings.Contains(req.Messages[0].Content, "Think") {
			if strings.Contains(req.Messages[len(req.Messages)-1].Content, "1 + 1") {
				return llmtest.Reply{Status: 400, Content: "context window exceeded for this question"}
			}
			return llmtest.Reply{Status: 404, Content: "model agent-model does not exist"}
		}
		return llmtest.Reply{Content: "4"}
	}
	f := newFixture(t, llmtest.JudgeAndAgent(llmtest.Judge(nil), agent))
	run := f.launch(f.config(f.qaDataset(4), ""))
	status, err := f.m.Execute(context.Background(), run.ID)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := f.db.Run(context.Background(), run.ID)
	if status != store.RunFailed || !strings.Contains(got.Message, `every one of 12 tasks under "careful" failed`) ||
		!strings.Contains(got.Message, "most often (9×)") || !strings.Contains(got.Message, "does not exist") {
		t.Fatalf("run ended %s: %q", status, got.Message)
	}
	s, err := report.Summarize(context.Background(), f.db, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range s.Conditions {
		switch c.Name {
		case "baseline":
			if c.Errors != 0 || len(c.TopErrors) != 0 {
				t.Errorf("baseline: %d errors, %+v", c.Errors, c.TopErrors)
			}
		case "careful":
			if len(c.TopErrors) != 2 || c.TopErrors[0].Count != 9 || c.TopErrors[1].Count != 3 ||
				!strings.Contains(c.TopErrors[1].Message, "context window") || c.TopErrors[0].Judge {
				t.Errorf("careful's top errors: %+v", c.TopErrors)
			}
		}
	}
}

// A run whose conditions all succeed in part still completes.
func TestSomeErrorsStillComplete(t *testing.T) {
	agent := func(req *llmtest.ChatRequest) llmtest.Reply {
		if strings.Contains(req.Messages[len(req.Messages)-1].Content, "1 + 1") {
			return llmtest.Reply{Status: 400, Content: "refused"}
		}
		return llmtest.Reply{Content: "4"}
	}
	f := newFixture(t, llmtest.JudgeAndAgent(llmtest.Judge(nil), agent))
	run := f.launch(f.config(f.qaDataset(3), ""))
	if status, err := f.m.Execute(context.Background(), run.ID); err != nil || status != store.RunCompleted {
		t.Fatalf("%s %v", status, err)
	}
}
