package web_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"assay/config"
	"assay/runner/llm/llmtest"
	"assay/store"
	"assay/tally"
)

const runbookRubric = `metrics:
  - name: cites_runbook
    description: The answer points to the runbook section that applies.
    scale: pass
  - name: calm
    description: The answer keeps a calm tone.
    scale: 1-5
`

// runbookJudge judges the built-in rubric and the runbook rubric alike.
func runbookJudge(answer string) llmtest.Handler {
	judgeH := func(req *llmtest.ChatRequest) llmtest.Reply {
		a, _ := llmtest.JudgeAnswer(req, map[string]any{"cites_runbook": 1, "calm": 4,
			"factual_adherence": 4, "completeness": 5, "helpfulness_and_clarity": 3, "unverified_claims": []string{}})
		return llmtest.Reply{Content: a}
	}
	return llmtest.JudgeAndAgent(judgeH, llmtest.Text(answer))
}

// A rubric written on the Rubrics page: refused with the line of its
// mistake and the text kept, saved, listed, shown with its judge's prompt,
// edited and deleted.
func TestRubricsPage(t *testing.T) {
	f := newRunServer(t, runbookJudge("See the runbook."))
	_, doc := f.get("/rubrics")
	if doc.Find("nav a.active").Text() != "Rubrics" || doc.Find(".panel.empty").Length() != 1 {
		t.Fatalf("an empty rubrics page: nav %q", doc.Find("nav a.active").Text())
	}
	_, doc = f.get("/rubrics/new")
	if got := doc.Find("#source").Text(); !strings.Contains(got, "cites_runbook") {
		t.Errorf("a new rubric starts from the example: %q", got)
	}
	if !strings.Contains(doc.Find("#rubric-prompt pre").Text(), "cites_runbook") {
		t.Error("the example's prompt is not shown")
	}

	bad := strings.Replace(runbookRubric, "scale: 1-5", "scale: 1-10", 1)
	resp, doc := f.postForm("/rubrics", url.Values{"name": {"runbook"}, "source": {bad}})
	if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(text(doc, "#form-error"), `rubric:7: metrics[1].scale: want "1-5", "0-1" or "pass" (got "1-10")`) {
		t.Fatalf("a bad scale: %d %q", resp.StatusCode, text(doc, "#form-error"))
	}
	if doc.Find("#source").Text() != bad || doc.Find("#name").AttrOr("value", "") != "runbook" {
		t.Error("the refused form lost what was typed")
	}
	resp, doc = f.postForm("/rubrics", url.Values{"name": {"runbook"}, "source": {runbookRubric}})
	if resp.Request.URL.Path != "/rubrics/runbook" || !strings.Contains(doc.Find("#rubric-prompt pre").Text(), "calm") {
		t.Fatalf("saving ended at %s: %q", resp.Request.URL.Path, text(doc, ".flash"))
	}
	resp, doc = f.postForm("/rubrics", url.Values{"name": {"runbook"}, "source": {runbookRubric}})
	if resp.StatusCode != http.StatusConflict || !strings.Contains(text(doc, "#form-error"), `a rubric called "runbook" exists`) {
		t.Errorf("the same name again: %d %q", resp.StatusCode, text(doc, "#form-error"))
	}
	_, doc = f.get("/rubrics")
	if got := text(doc, "#rubrics tbody tr"); !strings.Contains(got, "cites_runbook (pass/fail), calm (1–5)") {
		t.Errorf("the list: %q", got)
	}
	edited := strings.Replace(runbookRubric, "calm tone", "calm, kind tone", 1)
	f.postForm("/rubrics/runbook", url.Values{"source": {edited}})
	if saved, _ := f.db.Rubric(context.Background(), "runbook"); saved.Source != edited {
		t.Errorf("the edit was not saved: %q", saved.Source)
	}
	f.postForm("/rubrics/runbook/delete", url.Values{})
	if list, _ := f.db.Rubrics(context.Background()); len(list) != 0 {
		t.Errorf("deleted, %d left", len(list))
	}
	if resp, _ := f.get("/rubrics/runbook"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("a deleted rubric's page: %d", resp.StatusCode)
	}
}

// A saved rubric is an evaluator on the run form; a run that uses it keeps
// a copy, so editing the rubric later changes nothing of the run. The
// Assertions box adds checks of its own.
func TestRunFormUsesSavedRubricsAndAssertions(t *testing.T) {
	f := newRunServer(t, runbookJudge("See the runbook, section 4."))
	ctx := context.Background()
	if _, err := f.db.SaveRubric(ctx, "runbook", runbookRubric); err != nil {
		t.Fatal(err)
	}
	ds := f.qaDataset(2)
	conds := f.conditions("baseline")
	_, doc := f.get(fmt.Sprintf("/runs/new?dataset=%d", ds))
	box := doc.Find(`input[name=evaluator][value="judge:runbook"]`)
	if box.Length() != 1 || !strings.Contains(box.Parent().Text(), "your rubric: cites_runbook (pass/fail), calm (1–5)") {
		t.Fatalf("the saved rubric is not offered: %q", doc.Find("#evaluators").Text())
	}
	if !strings.Contains(doc.Find("#judge-prompt-runbook pre").Text(), "cites_runbook") {
		t.Error("the saved rubric's prompt is not on the form")
	}

	form := f.runForm(ds, conds)
	form["evaluator"] = []string{"judge:runbook"}
	form.Set("repetitions", "1")
	form.Set("assertions", "- contain: runbook\n")
	resp, doc := f.postForm("/runs", form)
	if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(text(doc, "#form-error"), "Assertions:1: item 1.contain: unknown assertion (did you mean contains?)") {
		t.Fatalf("a bad assertion: %d %q", resp.StatusCode, text(doc, "#form-error"))
	}
	if doc.Find("#assertions").Text() != "- contain: runbook\n" || doc.Find(`input[value="judge:runbook"]`).AttrOr("checked", "no") == "no" {
		t.Error("the refused form lost the assertions or the chosen rubric")
	}

	form.Set("assertions", "- contains: runbook\n- max_length: {words: 3}\n")
	id := f.launch(form)
	f.waitFor(id, store.RunCompleted)
	if _, err := f.db.SaveRubric(ctx, "runbook", strings.Replace(runbookRubric, "calm", "brief", -1)); err != nil {
		t.Fatal(err)
	}
	if err := f.db.DeleteRubric(ctx, "runbook"); err != nil {
		t.Fatal(err)
	}
	run, _ := f.db.Run(ctx, id)
	cfg := run.Config
	if r, ok := cfg.RubricNamed("runbook"); !ok || r.Metrics[1].Name != "calm" || len(cfg.Assertions) != 2 {
		t.Fatalf("the run's config: rubrics %+v, assertions %+v", cfg.Rubrics, cfg.Assertions)
	}
	_, doc = f.get(fmt.Sprintf("/runs/%d", id))
	page := doc.Find("#summary").Text()
	for _, want := range []string{"cites_runbook", "calm", `contains "runbook"`, "max_length 3 words"} {
		if !strings.Contains(page, want) {
			t.Errorf("the report's summary lacks %s: %.600q", want, page)
		}
	}
	if !strings.Contains(doc.Find("#judge-prompts").Text(), "cites_runbook") {
		t.Error("the report does not show the rubric's prompt after the rubric was deleted")
	}
}

// Rubrics in the JSON API; a run launched through it names a saved rubric
// the way a run file does.
func TestRubricsAPI(t *testing.T) {
	f := newRunServer(t, runbookJudge("See the runbook."))
	code, body := api(t, f.browser, "PUT", "/api/rubrics/runbook", "", map[string]any{"source": "metrics: []\n"})
	if code != 422 || !strings.Contains(body, "metrics: required: at least one metric") {
		t.Fatalf("a rubric without metrics: %d %s", code, body)
	}
	code, body = api(t, f.browser, "PUT", "/api/rubrics/runbook", "", map[string]any{"source": runbookRubric})
	var got struct {
		Name   string         `json:"name"`
		Rubric *config.Rubric `json:"rubric"`
	}
	json.Unmarshal([]byte(body), &got)
	if code != 200 || got.Name != "runbook" || got.Rubric == nil || len(got.Rubric.Metrics) != 2 {
		t.Fatalf("put: %d %s", code, body)
	}
	if code, body := api(t, f.browser, "GET", "/api/rubrics", "", nil); code != 200 || !strings.Contains(body, `"name":"runbook"`) {
		t.Errorf("list: %d %s", code, body)
	}

	ds := f.qaDataset(1)
	f.conditions("baseline")
	run := map[string]any{"agent": map[string]any{"type": "openai", "model": "agent-model", "base_url": f.fake.URL},
		"judge":      map[string]any{"model": "judge-model", "base_url": f.fake.URL},
		"execution":  map[string]any{"num_repetitions": 1},
		"evaluators": []any{map[string]any{"judge": "runbook"}}}
	id := f.launchRun(ds, []string{"baseline"}, run)
	data, err := tally.Of(f.db).ReportData(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	metrics := map[string]bool{}
	for _, m := range data.Scores {
		metrics[m.Evaluator+"/"+m.Metric] = true
	}
	if !metrics["runbook/cites_runbook"] || !metrics["runbook/calm"] || len(metrics) != 2 {
		t.Errorf("scores by evaluator/metric: %v", metrics)
	}
	if code, _ := api(t, f.browser, "DELETE", "/api/rubrics/runbook", "", nil); code != 204 {
		t.Errorf("delete: %d", code)
	}
	if code, _ := api(t, f.browser, "DELETE", "/api/rubrics/runbook", "", nil); code != 404 {
		t.Errorf("delete again: %d", code)
	}
}

// More models on the run form make a run over several models: each
// condition as each model answers it, and a Routing page.
func TestRunFormWithSeveralModels(t *testing.T) {
	f := newRunServer(t, runbookJudge("See the runbook."))
	ds := f.qaDataset(3)
	form := f.runForm(ds, f.conditions("baseline"))
	form.Set("repetitions", "1")
	form.Set("agent_models", "large: agent-large\n\n")
	resp, doc := f.postForm("/runs/estimate", form)
	if resp.StatusCode != 200 || text(doc, "#agent-calls") != "6" {
		t.Errorf("the estimate of two models over 3 samples: %q agent calls", text(doc, "#agent-calls"))
	}
	if why := strings.Join(strings.Fields(text(doc, "#agent-calls-why")), " "); why != "3 samples × 1 condition × 2 models × 1 repetition" {
		t.Errorf("the agent calls' breakdown: %q", why)
	}
	bad := f.runForm(ds, form["condition"])
	bad.Set("agent_models", "large: gpt 4o")
	if resp, doc := f.postForm("/runs", bad); resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(text(doc, "#form-error"), "More models, line 1") {
		t.Errorf("a bad model line: %d %q", resp.StatusCode, text(doc, "#form-error"))
	}
	id := f.launch(form)
	f.waitFor(id, store.RunCompleted)
	run, _ := f.db.Run(context.Background(), id)
	var names []string
	for _, c := range run.Conditions {
		names = append(names, c.Name)
	}
	if strings.Join(names, " | ") != "baseline · agent-model | baseline · large" || run.TotalTasks != 6 {
		t.Errorf("the run's conditions %q, %d tasks", names, run.TotalTasks)
	}
	_, doc = f.get(fmt.Sprintf("/runs/%d", id))
	href, _ := doc.Find("#routing-link").Attr("href")
	if href != fmt.Sprintf("/runs/%d/routing", id) {
		t.Fatalf("the routing link: %q", href)
	}
	_, doc = f.get(href)
	if n := doc.Find("#routing-table tbody tr").Length(); n != 12 {
		t.Errorf("%d algorithms on the Routing page: %q", n, text(doc, "#routing-message"))
	}
	// A share link leads to the same replay, read-only.
	_, doc = f.postForm(fmt.Sprintf("/runs/%d/shares", id), url.Values{})
	link, _ := doc.Find("#new-link input").Attr("value")
	shared := strings.TrimPrefix(link, f.srv.URL)
	_, doc = f.get(shared)
	if href, _ := doc.Find("#routing-link").Attr("href"); href != shared+"/routing" {
		t.Fatalf("the shared report's routing link: %q", href)
	}
	_, doc = f.get(shared + "/routing")
	if doc.Find("#routing-table tbody tr").Length() != 12 || doc.Find("form").Length() != 0 {
		t.Errorf("the shared Routing page: %d rows, %d forms", doc.Find("#routing-table tbody tr").Length(), doc.Find("form").Length())
	}
	_, doc = f.get("/runs/new")
	if got := doc.Find("#agent_models").Text(); got != "large: agent-large" {
		t.Errorf("the next form starts from the last run's models: %q", got)
	}
}

// Every model has a name: the form's first model is named (its model id by
// default), the API takes agent.model beside agent.models as the first
// model, and two runs of the same models compare condition by condition
// whether a model is known by its name or its model id.
func TestModelsHaveNamesAndCompareAcrossRuns(t *testing.T) {
	f := newRunServer(t, runbookJudge("See the runbook."))
	ds := f.qaDataset(3)
	conds := f.conditions("baseline")
	form := f.runForm(ds, conds)
	form.Set("repetitions", "1")
	form.Set("agent_model_name", "small")
	form.Set("agent_models", "large: agent-large")
	a := f.launch(form)
	f.waitFor(a, store.RunCompleted)
	run, _ := f.db.Run(context.Background(), a)
	if got := run.Conditions[0].Name; got != "baseline · small" {
		t.Errorf("the first model's condition is %q", got)
	}
	if _, doc := f.get("/runs/new"); attr(doc, "#agent_model_name", "value") != "small" {
		t.Errorf("the next form starts from the first model's name: %q", attr(doc, "#agent_model_name", "value"))
	}
	// The API: agent.model beside agent.models, the second named by its id.
	b := f.launchRun(ds, []string{"baseline"}, map[string]any{
		"agent": map[string]any{"type": "openai", "model": "agent-model", "base_url": f.fake.URL, "api_key_env": "",
			"models": []map[string]any{{"model": "agent-large"}}},
		"judge":     map[string]any{"model": "judge-model", "base_url": f.fake.URL, "api_key_env": ""},
		"execution": map[string]any{"num_repetitions": 1},
	})
	runB, _ := f.db.Run(context.Background(), b)
	var names []string
	for _, c := range runB.Conditions {
		names = append(names, c.Name)
	}
	if strings.Join(names, " | ") != "baseline · agent-model | baseline · agent-large" {
		t.Fatalf("the API run's conditions %q", names)
	}
	// The CSV says which model answered each row.
	resp, err := f.http.Get(f.srv.URL + fmt.Sprintf("/runs/%d/export.csv", a))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(resp.Body).ReadAll()
	resp.Body.Close()
	if err != nil || len(rows) < 2 || rows[0][len(rows[0])-1] != "model" {
		t.Fatalf("csv header %v: %v", rows[0], err)
	}
	models := map[string]bool{}
	for _, row := range rows[1:] {
		models[row[3]+" → "+row[len(row)-1]] = true
	}
	if !models["baseline · small → agent-model"] || !models["baseline · large → agent-large"] || len(models) != 2 {
		t.Errorf("the CSV's conditions and models: %v", models)
	}
	_, doc := f.get("/runs")
	var cells []string
	doc.Find("#runs tbody tr").First().Find("td.run-conditions .cond").Each(func(_ int, s *goquery.Selection) {
		cells = append(cells, strings.TrimSpace(s.Text()))
	})
	if got := strings.Join(cells, " | "); got != "baseline | × 2 models" {
		t.Errorf("the runs list names a run over several models' conditions %q", got)
	}
	_, doc = f.get(fmt.Sprintf("/compare?a=%d&b=%d", a, b))
	if doc.Find("#unmatched").Length() != 0 {
		t.Errorf("compare: %q", text(doc, "#unmatched"))
	}
	if got := doc.Find(".compare-condition h3, .compare-condition h2").Text(); !strings.Contains(got, "baseline · small ↔ baseline · agent-model") ||
		!strings.Contains(got, "baseline · large ↔ baseline · agent-large") {
		t.Errorf("conditions compared: %q", got)
	}
}

func attr(doc *goquery.Document, sel, name string) string {
	v, _ := doc.Find(sel).Attr(name)
	return v
}
