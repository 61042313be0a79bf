package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"assay/runner/llm/llmtest"
)

// A panel whose two judges err together: people score each answer's
// completeness one point above the strict judge, and one more on every
// other answer; the strict judge then errs by −1 or −2, the lenient one
// (a point above it) by 0 or −1 — the same swing. The report's review
// section and /api/runs/:id/agreement give each judge's errors, their
// correlation (1) and say that the panel's mean (errs by 1) is no better
// than the lenient judge (0.5).
func TestWhereAPanelsJudgesErrTogether(t *testing.T) {
	f := newRunServer(t, llmtest.JudgeAndAgent(panelJudge, llmtest.Text("An answer.")))
	ds := f.qaDataset(6)
	f.conditions("baseline")
	run := map[string]any{"agent": map[string]any{"type": "openai", "model": "agent-model", "base_url": f.fake.URL},
		"judges": []any{map[string]any{"name": "strict", "model": "strict-model", "base_url": f.fake.URL},
			map[string]any{"name": "lenient", "model": "lenient-model", "base_url": f.fake.URL}},
		"execution": map[string]any{"num_repetitions": 1}}
	id := f.launchRun(ds, []string{"baseline"}, run)
	results, err := f.db.Results(context.Background(), id)
	if err != nil || len(results) != 6 {
		t.Fatalf("%d results, %v", len(results), err)
	}
	for i, r := range results {
		for _, j := range r.Judgements {
			if j.Judge != "strict" {
				continue
			}
			for _, s := range j.Scores {
				if s.Metric != "completeness" {
					continue
				}
				human := s.Value + 1 + float64(i%2)
				if code, body := api(t, f.browser, "POST", fmt.Sprintf("/api/runs/%d/reviews", id), "",
					map[string]any{"score_id": s.ID, "verdict": "override", "value": human, "reviewer": "ann"}); code != 201 {
					t.Fatalf("review: %d %s", code, body)
				}
			}
		}
	}
	_, body := api(t, f.browser, "GET", fmt.Sprintf("/api/runs/%d/agreement", id), "", nil)
	var got struct {
		JudgeErrors []struct {
			Name         string       `json:"name"`
			Judges       []string     `json:"judges"`
			N            int          `json:"n"`
			MeanError    []float64    `json:"mean_error"`
			MeanAbsError []float64    `json:"mean_abs_error"`
			Matrix       [][]*float64 `json:"matrix"`
			Panel        float64      `json:"panel_mean_abs_error"`
			Best         string       `json:"best_judge"`
			PanelBetter  bool         `json:"panel_better"`
			Effective    float64      `json:"effective_judges"`
		} `json:"judge_errors"`
		Metrics []struct {
			Name      string   `json:"name"`
			Effective *float64 `json:"effective_judges"`
		} `json:"metrics"`
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil || len(got.JudgeErrors) != 1 {
		t.Fatalf("judge_errors: %v %s", err, body)
	}
	e := got.JudgeErrors[0]
	if e.Name != "completeness" || strings.Join(e.Judges, ",") != "strict,lenient" || e.N != 6 {
		t.Fatalf("judge errors of %q by %v over %d answers: %s", e.Name, e.Judges, e.N, body)
	}
	if e.MeanError[0] != -1.5 || e.MeanError[1] != -0.5 || e.MeanAbsError[0] != 1.5 || e.MeanAbsError[1] != 0.5 ||
		e.Panel != 1 || e.Best != "lenient" || e.PanelBetter || e.Matrix[0][1] == nil || *e.Matrix[0][1] < 0.999999 {
		t.Errorf("judge errors %+v", e)
	}
	// Two judges erring alike are worth one.
	if math.Abs(e.Effective-1) > 1e-9 {
		t.Errorf("effective judges %v, want 1", e.Effective)
	}
	for _, m := range got.Metrics {
		if m.Name == "completeness" && (m.Effective == nil || math.Abs(*m.Effective-1) > 1e-9) {
			t.Errorf("the agreement of completeness: effective judges %v, want 1", m.Effective)
		}
	}
	_, doc := f.get(fmt.Sprintf("/runs/%d", id))
	if v := text(doc, "#judge-errors-verdict-0"); !strings.Contains(v, "no less than its best judge (lenient, 0.50)") || !strings.Contains(v, "r 1.00") ||
		!strings.Contains(v, "its 2 judges are worth 1.0 independent ones") {
		t.Errorf("the report says: %q", v)
	}
	if row := cells(doc, "#judge-errors-0", "strict"); strings.Join(row, " ") != "strict -1.50 1.50 1.00 1.00" {
		t.Errorf("the strict judge's row: %q", row)
	}
}
