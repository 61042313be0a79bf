package web_test

import (
	"fmt"
	"net/http"
	"testing"

	"assay/store"
)

func TestRunsAPI(t *testing.T) {
	f := newRunServer(t, rubricAgent("4"))
	id := f.launch(f.runForm(f.qaDataset(2), f.conditions("baseline", "careful")))
	f.waitFor(id, store.RunCompleted)

	var list []struct {
		ID         int64    `json:"run_id"`
		Status     string   `json:"status"`
		Results    int      `json:"results"`
		Conditions []string `json:"conditions"`
	}
	f.getJSON("/api/runs", &list)
	if len(list) != 1 || list[0].ID != id || list[0].Status != "completed" || list[0].Results != 12 || len(list[0].Conditions) != 2 {
		t.Fatalf("runs %+v", list)
	}

	type metric struct {
		Evaluator string     `json:"evaluator"`
		Name      string     `json:"name"`
		Mean      float64    `json:"mean"`
		CI95      [2]float64 `json:"ci95"`
		N         int        `json:"n"`
	}
	var sum struct {
		RunID      int64   `json:"run_id"`
		Status     string  `json:"status"`
		SHA256     string  `json:"dataset_sha256"`
		Results    int     `json:"results"`
		CostUSD    float64 `json:"cost_usd"`
		Conditions []struct {
			Name    string   `json:"name"`
			Metrics []metric `json:"metrics"`
		} `json:"conditions"`
	}
	f.getJSON(fmt.Sprintf("/api/runs/%d", id), &sum)
	if sum.RunID != id || sum.Status != "completed" || len(sum.SHA256) != 64 || sum.Results != 12 || len(sum.Conditions) != 2 {
		t.Fatalf("summary %+v", sum)
	}
	if m := sum.Conditions[0].Metrics[0]; m.Evaluator != "rubric" || m.Name != "factual_adherence" || m.Mean != 4 || m.N != 6 {
		t.Errorf("metric %+v", m)
	}

	req, _ := http.NewRequest("POST", fmt.Sprintf("%s/api/runs/%d/cancel", f.srv.URL, id), nil)
	req.Header.Set("X-CSRF-Token", f.csrf)
	resp, err := f.http.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("cancel: %v %v", err, resp.Status)
	}
	resp.Body.Close()
	if run, _ := f.db.Run(t.Context(), id); run.Status != store.RunCompleted {
		t.Errorf("cancelling a completed run made it %s", run.Status)
	}
	if resp := f.getJSON("/api/runs/999", &struct{}{}); resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown run: %d", resp.StatusCode)
	}
}
