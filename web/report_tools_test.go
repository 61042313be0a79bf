package web_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"assay/store"
	"assay/web"
)

func TestReportCountsToolCallsAndLinksToSamples(t *testing.T) {
	b, db := newServer(t, web.Config{})
	id, samples := handRunIn(t, db, store.RunCompleted)
	_, doc := b.get(fmt.Sprintf("/runs/%d", id))
	if doc.Find(`#cost th:contains("Tool calls")`).Length() != 0 {
		t.Error("a run without tool calls should not show a tool-call column")
	}
	calls := []store.ToolCall{{Turn: 1, Server: "docs", Tool: "search", IsError: true}, {Turn: 2, Server: "docs", Tool: "search"}}
	extra := &store.Result{RunID: id, SampleRow: samples[0], Condition: "with-docs", Repetition: 3, Attempts: 1,
		Response: "found it", ToolCalls: calls}
	if _, err := db.SaveResult(context.Background(), extra); err != nil {
		t.Fatal(err)
	}
	_, doc = b.get(fmt.Sprintf("/runs/%d", id))
	row := text(doc, `#cost tbody tr:contains("with-docs")`)
	if !strings.Contains(row, "2") || !strings.Contains(row, "(1 failed)") {
		t.Errorf("with-docs cost row %q should count 2 tool calls, 1 failed", row)
	}
	if href, _ := doc.Find("#browse-samples").Attr("href"); href != fmt.Sprintf("/runs/%d/samples", id) {
		t.Errorf("the report links to its samples table, got %q", href)
	}
}
