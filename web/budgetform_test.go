package web_test

import (
	"context"
	"strings"
	"testing"

	"assay"
)

// A budget far below the estimate is pointed out before launch.
func TestTheFormWarnsOfABudgetBelowTheEstimate(t *testing.T) {
	f := newRunServer(t, rubricAgent("4"))
	for _, m := range []string{"agent-model", "judge-model"} {
		if err := f.db.SetPrice(context.Background(), assay.Price{Model: m, InputPerMTok: 100, OutputPerMTok: 300}); err != nil {
			t.Fatal(err)
		}
	}
	form := f.runForm(f.qaDataset(20), f.conditions("baseline"))
	f.get("/runs/new")
	_, doc := f.postForm("/runs/estimate", form)
	if doc.Find("#budget-short").Length() != 0 {
		t.Error("a warning without a budget")
	}
	form.Set("budget_usd", "0.001")
	_, doc = f.postForm("/runs/estimate", form)
	if got := text(doc, "#budget-short"); !strings.Contains(got, "The budget of $0.001 covers about") || !strings.Contains(got, "stop early") {
		t.Errorf("the warning: %q (estimate %q)", got, text(doc, "#estimate-cost"))
	}
	form.Set("budget_usd", "1000")
	if _, doc = f.postForm("/runs/estimate", form); doc.Find("#budget-short").Length() != 0 {
		t.Error("a warning for a budget above the estimate")
	}
}
