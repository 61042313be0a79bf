package web_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"assay/store"
)

// The run form and the API take a stopping rule, refuse one whose metric
// the run does not give with the same words, and a run launched with one
// stops once every condition's interval is as narrow as asked; the report
// says when and why.
func TestStoppingRuleFromTheFormAndTheAPI(t *testing.T) {
	f := newRunServer(t, rubricAgent("The answer is 4."))
	ds := f.qaDataset(100)
	conds := f.conditions("c")

	form := f.runForm(ds, conds)
	form.Set("repetitions", "1")
	form.Set("stop_when", "precise")
	form.Set("stop_metric", "accuracy")
	form.Set("stop_half_width", "0.5")
	f.get("/runs/new")
	_, doc := f.postForm("/runs", form)
	if got := text(doc, "#form-error"); !strings.Contains(got, `stop.metric: no evaluator of this run gives "accuracy"`) ||
		!strings.Contains(got, "completeness") {
		t.Errorf("a metric the run does not give: %q", got)
	}
	code, body := api(t, f.browser, "POST", "/api/runs", "", map[string]any{"dataset_id": ds, "conditions": []string{"c"},
		"run": map[string]any{"agent": map[string]any{"type": "openai", "model": "m", "base_url": f.fake.URL, "api_key_env": ""},
			"judge": map[string]any{"model": "j", "base_url": f.fake.URL, "api_key_env": ""}, "stop": map[string]any{"when": "precise", "metric": "accuracy", "half_width": 0.5}}})
	if code != 422 || !strings.Contains(body, `stop.metric: no evaluator of this run gives \"accuracy\"`) {
		t.Errorf("the API, the same rule: %d %s", code, body)
	}

	form.Set("stop_metric", "completeness")
	form.Set("stop_min_samples", "10")
	id := f.launch(form)
	run := f.waitFor(id, store.RunCompleted, store.RunFailed)
	st, err := f.db.RunStopOf(context.Background(), id)
	if err != nil || st == nil || run.Status != store.RunCompleted {
		t.Fatalf("the run ended %s (%s) with stop %+v (%v)", run.Status, run.Message, st, err)
	}
	if st.Samples < 10 || st.Samples >= 100 || st.SavedTasks != 100-st.Samples {
		t.Errorf("stopped: %+v", st)
	}
	_, doc = f.get(fmt.Sprintf("/runs/%d", id))
	if got := text(doc, "#stopped-early"); !strings.Contains(got, "completeness known within ±0.5") {
		t.Errorf("the report says %q", got)
	}
	if got := text(doc, "#run-message"); !strings.Contains(got, "Stopped early") || !strings.Contains(got, "not needed") {
		t.Errorf("the run's message: %q", got)
	}

	// The form made from the run has the rule.
	_, doc = f.get("/runs/new")
	if v, _ := doc.Find("#stop_metric").Attr("value"); v != "completeness" {
		t.Errorf("the form from the run: stop_metric %q", v)
	}
}
