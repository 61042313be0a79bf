package web_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"assay"
	"assay/config"
	"assay/store"
	"assay/web"
)

// A run with its own settings on the hand run's dataset: another judge
// temperature, and a condition with a prompt, an MCP server and a guard.
func storeConfiguredRun(t *testing.T, db *store.DB, datasetID int64) int64 {
	t.Helper()
	cfg := config.Config{Name: "configured", Agent: config.Agent{Type: config.AgentOpenAI, Model: "agent-model"},
		Judge:           config.Judge{Model: "judge-model", Temperature: 0.7, Seed: 42},
		JudgeSampleRate: 1, JudgeRepetitions: 1, Evaluators: []config.Evaluator{config.EvalRubric, config.EvalExactMatch}}
	run := &store.Run{Name: "configured", DatasetID: datasetID, Config: &cfg, Repetitions: 2, TotalTasks: 20,
		Conditions: []assay.Condition{{Name: "baseline"}, {Name: "with-docs", SystemPrompt: "Cite the runbook <b>always</b>.",
			RequireMCPToolUse: true, MCPServers: []assay.MCPServer{{Name: "docs", Transport: assay.TransportHTTP,
				URL: "https://docs.internal.example/mcp", Headers: map[string]string{"Authorization": "Bearer ${DOCS_TOKEN}"}}}}}}
	if err := db.CreateRun(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	db.SetRunStatus(context.Background(), run.ID, store.RunRunning, "")
	db.SetRunStatus(context.Background(), run.ID, store.RunCompleted, "")
	return run.ID
}

func TestReportSaysWhatEachConditionIs(t *testing.T) {
	b, db := newServer(t, web.Config{})
	a, _ := handRunIn(t, db, store.RunCompleted)
	runA, _ := db.Run(context.Background(), a)
	id := storeConfiguredRun(t, db, runA.DatasetID)

	_, doc := b.get(fmt.Sprintf("/runs/%d", id))
	details := doc.Find("#condition-details")
	if details.Length() != 1 || details.AttrOr("open", "none") != "none" {
		t.Fatalf("the conditions' details: %d, open %q (want folded)", details.Length(), details.AttrOr("open", ""))
	}
	got := strings.Join(strings.Fields(details.Text()), " ")
	for _, want := range []string{"Cite the runbook <b>always</b>.", "docs (http) https://docs.internal.example/mcp · headers Authorization",
		"requires MCP tool use", "No system prompt.", "{question}"} {
		if !strings.Contains(got, want) {
			t.Errorf("the details lack %q: %q", want, got)
		}
	}
	if strings.Contains(got, "DOCS_TOKEN") {
		t.Errorf("a header's value is shown: %q", got)
	}
	// A share link names the server and its transport only.
	share, _ := db.CreateShare(context.Background(), id)
	_, doc = b.get("/r/" + share.Token)
	got = strings.Join(strings.Fields(doc.Find("#condition-details").Text()), " ")
	if !strings.Contains(got, "docs (http)") || strings.Contains(got, "docs.internal.example") || strings.Contains(got, "Authorization") {
		t.Errorf("the shared details: %q", got)
	}
	// The compare page lists the settings that differ.
	_, doc = b.get(fmt.Sprintf("/compare?a=%d&b=%d", a, id))
	diff := map[string][2]string{}
	for _, tr := range doc.Find("#settings-diff-table tbody tr").EachIter() {
		td := tr.Find("td")
		diff[td.Eq(0).Text()] = [2]string{td.Eq(1).Text(), td.Eq(2).Text()}
	}
	if diff["judge.temperature"] != [2]string{"0", "0.7"} || diff["conditions.with-docs.system_prompt"][1] != "Cite the runbook <b>always</b>." ||
		diff["conditions.with-docs.mcp_servers[0].url"] != [2]string{"—", "https://docs.internal.example/mcp"} {
		t.Errorf("settings that differ: %v", diff)
	}
	for k, v := range diff {
		if strings.Contains(v[0]+v[1], urlSecret) {
			t.Errorf("%s shows a URL's password: %q", k, v)
		}
	}
	if _, same := diff["judge.seed"]; same || !strings.Contains(doc.Find("#settings-diff summary").Text(), "are the same") {
		t.Errorf("the shared settings: %q", doc.Find("#settings-diff summary").Text())
	}
}
