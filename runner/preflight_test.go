package runner_test

import (
	"assay/tally"
	"context"
	"strings"
	"testing"

	"assay"
)

// A run that would miss variables is refused before it is stored, naming
// every variable and where it is needed: the keys, the config's references
// and the conditions' MCP servers.
func TestARunMissingVariablesIsRefusedBeforeItStarts(t *testing.T) {
	f := newFixture(t, rubricJudge())
	env := map[string]string{"PRESENT": "yes"}
	m := f.manager(func(n string) string { return env[n] })
	cfg := f.config(f.qaDataset(2), "")
	cfg.Agent.APIKeyEnv = "AGENT_KEY"
	cfg.Agent.Model = "${MODEL_NAME}"
	ds, err := m.DatasetFromConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	conditions := []assay.Condition{
		{Name: "baseline"},
		{Name: "with-docs", MCPServers: []assay.MCPServer{{Name: "docs", Transport: assay.TransportHTTP, URL: "https://docs.example/${DOCS_PATH:-mcp}",
			Headers: map[string]string{"Authorization": "Bearer ${DOCS_TOKEN}", "X-Team": "${PRESENT}"}}}},
		{Name: "with-files", MCPServers: []assay.MCPServer{{Name: "files", Transport: assay.TransportStdio, Command: "npx",
			Args: []string{"server", "${DOCS_TOKEN}"}, Env: map[string]string{"ROOT": "${FILES_ROOT}"}}}},
	}
	_, err = m.Create(context.Background(), cfg, ds.ID, conditions)
	if assay.ErrorCode(err) != assay.EINVALID {
		t.Fatalf("want a refusal, got %v", err)
	}
	msg := assay.ErrorMessage(err)
	for _, want := range []string{
		"AGENT_KEY (agent.api_key_env)",
		"DOCS_TOKEN (condition with-docs: MCP server docs: headers.Authorization; condition with-files: MCP server files: args[1])",
		"FILES_ROOT (condition with-files: MCP server files: env.ROOT)",
		"MODEL_NAME (agent.model)",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("the refusal does not say %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "PRESENT") || strings.Contains(msg, "DOCS_PATH") {
		t.Errorf("the refusal names a variable that is set or has a default:\n%s", msg)
	}
	if runs, _ := tally.Of(f.db).Runs(context.Background()); len(runs) != 0 {
		t.Errorf("%d runs stored", len(runs))
	}
	// With every variable set, the run is made.
	for _, n := range []string{"AGENT_KEY", "MODEL_NAME", "DOCS_TOKEN", "FILES_ROOT"} {
		env[n] = "set-" + n
	}
	if _, err := m.Create(context.Background(), cfg, ds.ID, conditions); err != nil {
		t.Fatal(err)
	}
}
