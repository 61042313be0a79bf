package web_test

import (
	"assay/tally"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

func TestEstimateFragmentCountsCalls(t *testing.T) {
	f := newRunServer(t, rubricAgent("4"))
	ds := f.qaDataset(3)
	conds := f.conditions("baseline", "careful")
	_, doc := f.get(fmt.Sprintf("/runs/new?dataset=%d", ds))
	if post, _ := doc.Find("#estimate").Attr("hx-post"); post != "/runs/estimate" {
		t.Fatalf("the estimate panel should update itself with hx-post, got %q", post)
	}
	f.postForm("/settings/prices", url.Values{"model": {"agent-model"}, "input": {"1"}, "output": {"2"}})

	cases := []struct {
		name         string
		edit         func(url.Values)
		agent, judge string
		problem      string
	}{
		{"rubric", func(url.Values) {}, "18", "18", ""},
		{"rubric and arbiter at half rate", func(v url.Values) {
			v["evaluator"] = []string{"rubric", "arbiter"}
			v.Set("judge_sample_rate", "0")
		}, "18", "0", ""},
		{"one repetition, judged twice", func(v url.Values) {
			v.Set("repetitions", "1")
			v.Set("judge_repetitions", "2")
		}, "6", "12", ""},
		{"exact_match on qa", func(v url.Values) { v["evaluator"] = []string{"exact_match"} }, "", "", "exact_match scores mcq datasets"},
		{"no condition", func(v url.Values) { v.Del("condition") }, "", "", "Conditions: choose at least one"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			form := f.runForm(ds, conds)
			tc.edit(form)
			resp, doc := f.postForm("/runs/estimate", form)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d", resp.StatusCode)
			}
			if got := text(doc, "#estimate-problem"); !strings.Contains(got, tc.problem) || (tc.problem == "") != (got == "") {
				t.Fatalf("problem %q, want %q", got, tc.problem)
			}
			if tc.problem != "" {
				return
			}
			if a, j := text(doc, "#agent-calls"), text(doc, "#judge-calls"); a != tc.agent || j != tc.judge {
				t.Errorf("agent %s judge %s calls, want %s and %s", a, j, tc.agent, tc.judge)
			}
			if tc.judge != "0" && !strings.Contains(text(doc, "#unpriced"), "judge-model") {
				t.Errorf("the judge model has no price: %q", text(doc, "#unpriced"))
			}
			if got := text(doc, "#estimate-cost"); got == "$0" {
				t.Errorf("the agent model is priced, cost %q", got)
			}
		})
	}
}

func TestRunFormErrorsKeepTheInput(t *testing.T) {
	cases := []struct {
		name string
		edit func(url.Values)
		want string
	}{
		{"no condition", func(v url.Values) { v.Del("condition") }, "Conditions: choose at least one condition."},
		{"exact_match on qa", func(v url.Values) { v["evaluator"] = []string{"exact_match"} }, "exact_match scores mcq datasets, and this dataset is qa"},
		{"no agent model", func(v url.Values) { v.Set("agent_model", " ") }, "Agent model:"},
		{"repetitions", func(v url.Values) { v.Set("repetitions", "three") }, "Repetitions: enter a whole number"},
		{"sample rate", func(v url.Values) { v.Set("judge_sample_rate", "2") }, "Judge sample rate: enter a number from 0 to 1"},
		{"a key instead of its variable", func(v url.Values) { v.Set("agent_key_env", "sk-proj-abc123") }, "never the key itself"},
		{"bad base URL", func(v url.Values) { v.Set("judge_base_url", "localhost:8080") }, `judge.base_url: "localhost:8080" is not one http(s) URL`},
		{"two base URLs pasted together", func(v url.Values) { v.Set("agent_base_url", "http://127.0.0.1:9/v1http://127.0.0.1:9/v1") }, `agent.base_url: "http://127.0.0.1:9/v1http://127.0.0.1:9/v1" is not one http(s) URL`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newRunServer(t, rubricAgent("4"))
			form := f.runForm(f.qaDataset(2), f.conditions("baseline", "careful"))
			form.Set("name", "my run")
			form.Set("budget_usd", "2.5")
			tc.edit(form)
			f.get("/runs/new")
			resp, doc := f.postForm("/runs", form)
			if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(text(doc, "#form-error"), tc.want) {
				t.Fatalf("got %d %q, want 422 %q", resp.StatusCode, text(doc, "#form-error"), tc.want)
			}
			for field, want := range map[string]string{"name": "my run", "budget_usd": "2.5", "repetitions": form.Get("repetitions"),
				"agent_base_url": form.Get("agent_base_url")} {
				if got, _ := doc.Find("#" + field).Attr("value"); got != want {
					t.Errorf("field %s kept as %q, want %q", field, got, want)
				}
			}
			checked := doc.Find("input[name=condition]:checked").Length()
			if checked != len(form["condition"]) {
				t.Errorf("%d conditions checked, want %d", checked, len(form["condition"]))
			}
			if got := doc.Find("input[name=evaluator]:checked").AttrOr("value", ""); got != form.Get("evaluator") {
				t.Errorf("evaluator %q checked, want %q", got, form.Get("evaluator"))
			}
			if strings.Contains(doc.Text(), "sk-proj-abc123") || doc.Find("#agent_key_env").AttrOr("value", "") == "sk-proj-abc123" {
				t.Error("the page shows what looks like a key")
			}
			if runs, _ := tally.Of(f.db).Runs(context.Background()); len(runs) != 0 {
				t.Errorf("a refused form created %d runs", len(runs))
			}
		})
	}
}

func TestNewRunFormFollowsTheDatasetKind(t *testing.T) {
	f := newRunServer(t, rubricAgent("4"))
	f.qaDataset(2)
	mcq := f.dataset("mmlu.jsonl", `{"question": "2 + 2?", "choices": ["3", "4", "5", "6"], "answer": "B"}`+"\n")
	f.conditions("baseline")

	_, doc := f.get(fmt.Sprintf("/runs/new?dataset=%d", mcq))
	if got := doc.Find("#dataset option[selected]").AttrOr("value", ""); got != fmt.Sprint(mcq) {
		t.Errorf("dataset %q selected, want %d", got, mcq)
	}
	if got := doc.Find("input[name=evaluator]:checked").AttrOr("value", ""); got != "exact_match" {
		t.Errorf("evaluator %q checked for mcq, want exact_match", got)
	}
	if got := doc.Find("#prompt").Text(); !strings.Contains(got, "{choices}") {
		t.Errorf("the mcq prompt template should be shown: %q", got)
	}
	if doc.Find("input[name=condition]:checked").Length() != 1 {
		t.Error("the only condition should be chosen")
	}
	if sel, _ := doc.Find("#dataset").Attr("hx-params"); !strings.Contains(sel, "evaluator") {
		t.Errorf("a change of dataset should reset the evaluators, hx-params %q", sel)
	}

	// The form asks again after a change of dataset: its fields are kept.
	q := url.Values{"filled": {"1"}, "dataset": {fmt.Sprint(mcq)}, "agent_model": {"my-model"}, "repetitions": {"5"}}
	_, doc = f.get("/runs/new?" + q.Encode())
	if got := doc.Find("#agent_model").AttrOr("value", ""); got != "my-model" {
		t.Errorf("agent model %q after the change of dataset", got)
	}
	if doc.Find("input[name=condition]:checked").Length() != 0 {
		t.Error("the user's choice of no condition should be kept")
	}
}

func TestEditedPromptOverridesTheTemplate(t *testing.T) {
	f := newRunServer(t, rubricAgent("Answer: B"))
	mcq := f.dataset("mmlu.jsonl", `{"question": "2 + 2?", "choices": ["3", "4", "5", "6"], "answer": "B"}`+"\n")
	form := f.runForm(mcq, f.conditions("baseline"))
	form["evaluator"] = []string{"exact_match"}
	form.Set("prompt", "Q: {question}\r\n{choices}\r\nReply with one letter.")
	id := f.launch(form)
	f.waitFor(id, "completed")
	for _, req := range f.fake.Requests() {
		if !strings.Contains(string(req.Body), `Q: 2 + 2?\n(A) 3\n(B) 4\n(C) 5\n(D) 6\nReply with one letter.`) {
			t.Fatalf("the agent was not sent the edited prompt: %s", req.Body)
		}
	}
}

func TestNewRunFormStartsFromTheLastRun(t *testing.T) {
	f := newRunServer(t, rubricAgent("4"))
	ds := f.qaDataset(1)
	conds := f.conditions("baseline", "careful", "other")
	form := f.runForm(ds, conds[:2])
	form.Set("budget_usd", "5")
	form.Set("allow_unpriced", "1")
	form.Set("judge_sample_rate", "0.5")
	id := f.launch(form)
	f.waitFor(id, "completed")

	_, doc := f.get("/runs/new")
	if got := doc.Find("#agent_base_url").AttrOr("value", ""); got != f.fake.URL {
		t.Errorf("agent base URL %q, want the last run's %q", got, f.fake.URL)
	}
	if got := doc.Find("input[name=condition]:checked").Length(); got != 2 {
		t.Errorf("%d conditions chosen, want the last run's 2", got)
	}
	if got := doc.Find("#budget_usd").AttrOr("value", "?"); got != "" {
		t.Errorf("budget %q: a budget belongs to one run", got)
	}
	if href := doc.Find("#from-run a").AttrOr("href", ""); href != fmt.Sprintf("/runs/%d", id) {
		t.Errorf("the form should say which run it starts from: %q", href)
	}
	if got := text(doc, "#carried-sample-rate"); !strings.Contains(got, "judge sample rate of 0.5") {
		t.Errorf("the carried sample rate is not pointed out: %q", got)
	}
	if got := text(doc, "#from-run"); !strings.Contains(got, "Filled in from run") || doc.Find("#fresh-form").Length() != 1 {
		t.Errorf("the form should say where its values come from and how to start afresh: %q", got)
	}
	if doc.Find("#unsaved-conditions").Length() != 0 {
		t.Errorf("the last run's conditions are all saved, yet the form says: %q", text(doc, "#unsaved-conditions"))
	}
	_, doc = f.get("/runs/new?fresh=1")
	if doc.Find("#from-run").Length() != 0 || doc.Find("#agent_base_url").AttrOr("value", "") == f.fake.URL {
		t.Error("a fresh form still carries the last run's settings")
	}
	// A condition of the last run no longer saved here (as a run file's
	// own never are) is named, with where to make it.
	id1, _ := strconv.ParseInt(conds[1], 10, 64)
	if err := f.db.DeleteCondition(context.Background(), id1); err != nil {
		t.Fatal(err)
	}
	_, doc = f.get("/runs/new")
	if got := text(doc, "#unsaved-conditions"); !strings.Contains(got, "Not saved on this server: careful") ||
		doc.Find("#unsaved-conditions a[href='/conditions/new']").Length() != 1 || doc.Find("input[name=condition]:checked").Length() != 1 {
		t.Errorf("a condition of the last run not saved here: %q, %d chosen", got, doc.Find("input[name=condition]:checked").Length())
	}
}

// A stopping rule carried from the last run is pointed out, and one that
// cannot bind (min_samples past the dataset's samples) is warned of.
func TestRunFormSaysWhatItCarriesAndWarnsOfARuleThatCannotBind(t *testing.T) {
	f := newRunServer(t, rubricAgent("4"))
	ds := f.qaDataset(8)
	form := f.runForm(ds, f.conditions("baseline", "careful"))
	form.Set("stop_when", "precise")
	form.Set("stop_half_width", "0.5")
	form.Set("stop_metric", "completeness")
	form.Set("stop_min_samples", "10")
	f.get("/runs/new")
	_, doc := f.postForm("/runs/estimate", form)
	if got := doc.Text(); !strings.Contains(got, "stop.min_samples is 10 and the dataset has 8 samples") {
		t.Errorf("the estimate does not warn of a rule that cannot bind: %q", got)
	}
	f.waitFor(f.launch(form), "completed")
	_, doc = f.get("/runs/new")
	if got := text(doc, "#carried-stop"); !strings.Contains(got, "stopping rule (precise)") {
		t.Errorf("the carried stopping rule is not pointed out: %q", got)
	}
}

// The run form refuses a budget over models without a price, naming them,
// until its box says their calls may count as free.
func TestRunFormBudgetNeedsPrices(t *testing.T) {
	f := newRunServer(t, rubricAgent("4"))
	ds := f.qaDataset(2)
	form := f.runForm(ds, f.conditions("baseline"))
	form.Set("budget_usd", "1")
	f.get("/runs/new")
	_, doc := f.postForm("/runs", form)
	if got := text(doc, "#form-error"); !strings.Contains(got, `"agent-model" (agent), "judge-model" (judge)`) || !strings.Contains(got, "allow_unpriced") {
		t.Errorf("a budget over unpriced models: %q", got)
	}
	if doc.Find("#allow_unpriced").Length() != 1 {
		t.Error("the form has no box to allow unpriced models")
	}
	form.Set("allow_unpriced", "1")
	f.waitFor(f.launch(form), "completed")
}

// A judge of the agent's family is flagged on the report: LLM judges
// favour their own family's answers.
func TestReportFlagsAJudgeOfTheAgentsFamily(t *testing.T) {
	f := newRunServer(t, rubricAgent("4"))
	ds := f.qaDataset(2)
	form := f.runForm(ds, f.conditions("baseline"))
	form.Set("agent_model", "claude-sonnet-4")
	form.Set("judge_model", "claude-opus-4-5")
	id := f.launch(form)
	f.waitFor(id, "completed")
	_, doc := f.get(fmt.Sprintf("/runs/%d", id))
	if got := text(doc, "#judge-same-family"); !strings.Contains(got, "the judge claude-opus-4-5 and the agent's claude-sonnet-4 are both claude") {
		t.Errorf("the report says %q", got)
	}
	var sum struct {
		SameFamily []struct{ Judge, Model, Family string } `json:"judge_same_family"`
	}
	f.getJSON(fmt.Sprintf("/api/runs/%d/report", id), &sum)
	if len(sum.SameFamily) != 1 || sum.SameFamily[0].Family != "claude" {
		t.Errorf("the API's report: %+v", sum.SameFamily)
	}

	form.Set("judge_model", "gpt-4.1")
	id = f.launch(form)
	f.waitFor(id, "completed")
	if _, doc = f.get(fmt.Sprintf("/runs/%d", id)); doc.Find("#judge-same-family").Length() != 0 {
		t.Error("a judge of another family is flagged")
	}
}

// The run form's "Keep the concurrency fixed" turns the adaptive limit off
// (execution.adaptive: false); a run launched without it adapts, and the
// next form starts from the last run's choice.
func TestRunFormKeepsTheConcurrencyFixedWhenAsked(t *testing.T) {
	f := newRunServer(t, rubricAgent("4"))
	ds := f.qaDataset(1)
	conds := f.conditions("baseline")
	for _, fixed := range []bool{true, false} {
		form := f.runForm(ds, conds)
		if fixed {
			form.Set("fixed_concurrency", "1")
		}
		id := f.launch(form)
		f.waitFor(id, "completed")
		run, err := f.db.Run(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		cfg := run.Config
		if cfg.Execution.Adapts() == fixed {
			t.Errorf("fixed %v: the run's calls adapt: %v", fixed, cfg.Execution.Adapts())
		}
		_, doc := f.get("/runs/new")
		if got := doc.Find("#fixed_concurrency:checked").Length() == 1; got != fixed {
			t.Errorf("fixed %v: the next form's box ticked: %v", fixed, got)
		}
	}
}
