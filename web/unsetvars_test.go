package web_test

import (
	"assay/tally"
	"context"
	"strconv"
	"strings"
	"testing"

	"assay"
)

// A condition's MCP server that needs a variable the server lacks: the
// estimate says so before launch, and the launch is refused, storing nothing.
func TestUnsetVariablesOfConditionsAreCheckedBeforeLaunch(t *testing.T) {
	f := newRunServer(t, rubricAgent("4"))
	c := &assay.Condition{Name: "with-docs", SystemPrompt: "Use the docs.", MCPServers: []assay.MCPServer{{Name: "docs",
		Transport: assay.TransportHTTP, URL: "https://docs.example/mcp", Headers: map[string]string{"Authorization": "Bearer ${ASSAY_TEST_UNSET_DOCS_TOKEN}"}}}}
	if err := f.db.CreateCondition(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	form := f.runForm(f.qaDataset(2), []string{strconv.FormatInt(c.ID, 10)})
	f.get("/runs/new")
	_, doc := f.postForm("/runs/estimate", form)
	if got := text(doc, ".unset-env"); !strings.Contains(got, "ASSAY_TEST_UNSET_DOCS_TOKEN") ||
		!strings.Contains(got, "condition with-docs: MCP server docs: headers.Authorization") {
		t.Errorf("the estimate: %q", got)
	}
	resp, doc := f.postForm("/runs", form)
	if got := text(doc, "#form-error"); resp.StatusCode != 422 || !strings.Contains(got, "ASSAY_TEST_UNSET_DOCS_TOKEN") {
		t.Errorf("the launch: %d %q", resp.StatusCode, got)
	}
	if runs, _ := tally.Of(f.db).Runs(context.Background()); len(runs) != 0 {
		t.Errorf("%d runs stored", len(runs))
	}
}
