package main

import (
	"context"
	"strings"
	"testing"

	"assay/tally"
)

// A budget cannot hold what it cannot count: a run with a budget whose
// judge has no price is refused before anything runs, naming the model;
// with allow_unpriced: true it runs, the judge's calls counted as free.
func TestABudgetRefusesAnUnpricedModel(t *testing.T) {
	b := newGateBench(t, "budget_usd: 5\nprices: {agent-model: {input_per_mtok: 1, output_per_mtok: 2}}\n")
	code, _, errOut := b.run()
	if code != 3 || !strings.Contains(errOut, `budget_usd: the model has no price, so the budget cannot count its calls: "judge-model" (judge)`) ||
		!strings.Contains(errOut, "allow_unpriced: true") {
		t.Errorf("exit %d, want 3 naming the judge's model:\n%s", code, errOut)
	}
	s, err := tally.Open(context.Background(), b.db)
	if err != nil {
		t.Fatal(err)
	}
	runs, _ := tally.Of(s).Runs(context.Background())
	s.Close()
	if len(runs) != 0 {
		t.Errorf("a refused run was stored: %d runs", len(runs))
	}

	b = newGateBench(t, "budget_usd: 5\nallow_unpriced: true\nprices: {agent-model: {input_per_mtok: 1, output_per_mtok: 2}}\n")
	if code, _, errOut := b.run(); code != 0 {
		t.Errorf("allow_unpriced: exit %d\n%s", code, errOut)
	}
	// Without a budget nothing is refused: the report says the model had no price.
	b = newGateBench(t, "")
	if code, _, errOut := b.run(); code != 0 {
		t.Errorf("no budget: exit %d\n%s", code, errOut)
	}
}
