package main

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"assay/tally"
)

// A run file's {judge: NAME} uses a rubric saved on the Rubrics page, and a
// gate can name an assertion's metric, spaces and quotes included.
func TestRunFileUsesASavedRubricAndGatesAnAssertion(t *testing.T) {
	b := newGateBench(t, `execution: {num_repetitions: 1}
evaluators:
  - {judge: runbook}
  - {contains: "answer."}
`)
	code, _, errOut := b.run()
	if code != 3 || !strings.Contains(errOut, `evaluators[0].judge: no rubric "runbook" under rubrics, nor saved on the Rubrics page`) {
		t.Fatalf("without the saved rubric: exit %d\n%s", code, errOut)
	}
	db, err := tally.Open(context.Background(), b.db)
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.SaveRubric(context.Background(), "runbook", "metrics:\n  - {name: cites_runbook, description: Points to the runbook., scale: pass}\n")
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	code, out, errOut := b.run("--json", "--gate", `contains "answer.">=1`, "--gate", "runbook.cites_runbook>=0")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	var got struct {
		Conditions []struct {
			Metrics []struct {
				Evaluator string  `json:"evaluator"`
				Name      string  `json:"name"`
				Mean      float64 `json:"mean"`
			} `json:"metrics"`
		} `json:"conditions"`
		Gates []struct{ Held bool } `json:"gates"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range got.Conditions[0].Metrics {
		names = append(names, m.Evaluator+"/"+m.Name)
	}
	slices.Sort(names)
	if strings.Join(names, ", ") != `contains/contains "answer.", runbook/cites_runbook` || len(got.Gates) != 4 {
		t.Errorf("metrics %v, %d gates", names, len(got.Gates))
	}
}

// The summary prints, beside each metric's CI, the smallest difference from
// the first condition the run can detect.
func TestRunPrintsTheDetectableDifference(t *testing.T) {
	b := newGateBench(t, "")
	code, out, errOut := b.run()
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	var concise, baseline string
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "completeness") && strings.HasPrefix(strings.TrimSpace(line), "concise") {
			concise = line
		}
		if strings.Contains(line, "completeness") && strings.HasPrefix(strings.TrimSpace(line), "baseline") {
			baseline = line
		}
	}
	// Every score is 4: the paired differences do not vary, so any true
	// difference would be seen.
	if !strings.Contains(out, "detectable") || !strings.Contains(concise, "±0.000") || !strings.Contains(baseline, "—") {
		t.Errorf("the table:\n%s", out)
	}
}
