package web_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"assay/config"
)

// A bad run is refused with the same words from the run form, the API and
// a run file: the rules are the run's (config), written once.
func TestOneValidatorForFormAPIAndRunFile(t *testing.T) {
	f := newRunServer(t, rubricAgent("4"))
	ds := f.qaDataset(2)
	conds := f.conditions("baseline")
	for _, tc := range []struct {
		name string
		form func(url.Values)                  // nil: the form has no such field
		run  func(agent, judge map[string]any) // the API's and the run file's settings
		want string
	}{
		{"a base URL that is not one",
			func(v url.Values) { v.Set("judge_base_url", "localhost:8080") },
			func(_, judge map[string]any) { judge["base_url"] = "localhost:8080" },
			`judge.base_url: "localhost:8080" is not one http(s) URL such as http://127.0.0.1:11434/v1`},
		{"a timeout over the cap",
			func(v url.Values) { v.Set("agent_timeout", "100000") },
			func(agent, _ map[string]any) { agent["timeout_seconds"] = 100000 },
			fmt.Sprintf("agent.timeout_seconds: must be at most %d, got 100000", config.MaxTimeoutSeconds)},
		{"an unknown key", nil, func(agent, _ map[string]any) { agent["modle"] = "x" }, "agent.modle"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.form != nil {
				form := f.runForm(ds, conds)
				tc.form(form)
				f.get("/runs/new")
				resp, doc := f.postForm("/runs", form)
				if got := text(doc, "#form-error"); resp.StatusCode != 422 || !strings.Contains(got, tc.want) {
					t.Errorf("the form: %d %q, want %q", resp.StatusCode, got, tc.want)
				}
			}
			agent := map[string]any{"type": "openai", "model": "agent-model", "base_url": f.fake.URL}
			judge := map[string]any{"model": "judge-model", "base_url": f.fake.URL}
			tc.run(agent, judge)
			run := map[string]any{"agent": agent, "judge": judge}
			if code, body := api(t, f.browser, "POST", "/api/runs", "", map[string]any{"dataset_id": ds, "conditions": []string{"baseline"}, "run": run}); code != 422 ||
				!strings.Contains(body, strings.ReplaceAll(tc.want, `"`, `\"`)) {
				t.Errorf("the API: %d %s, want %q", code, body, tc.want)
			}
			file := fmt.Sprintf("dataset: {path: ./q.jsonl}\nagent: %s\njudge: %s\nconditions: {baseline: {}}\n", flow(agent), flow(judge))
			_, err := config.Parse([]byte(file), "run.yaml", t.TempDir(), func(string) string { return "" })
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("the run file: %v, want %q", err, tc.want)
			}
		})
	}
}

// flow writes a map as a YAML flow mapping.
func flow(m map[string]any) string {
	var parts []string
	for k, v := range m {
		parts = append(parts, fmt.Sprintf("%s: %q", k, fmt.Sprint(v)))
		if n, ok := v.(int); ok {
			parts[len(parts)-1] = fmt.Sprintf("%s: %d", k, n)
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
