package web_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"assay/store"
	"assay/store/ingest"
	"assay/web"
)

// The runs list shows the newest fifty runs and pages through the rest,
// a search's pages keeping the search, each run with its conditions.
func TestRunsListPagesThroughManyRuns(t *testing.T) {
	b, db := newServer(t, web.Config{})
	ctx := context.Background()
	ds, _, err := ingest.Import(ctx, db, []byte(`{"question": "What is 2 + 2?", "answer": "4"}`+"\n"), ingest.Options{Filename: "qa.jsonl"}, "qa")
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 120; i++ {
		run := &store.Run{Name: fmt.Sprintf("nightly-%03d", i), DatasetID: ds.ID, Config: []byte(`{}`), Repetitions: 1, TotalTasks: 2,
			Conditions: []store.Condition{{Name: "baseline", MCPServers: []store.MCPServer{}}, {Name: fmt.Sprintf("variant-%d", i), MCPServers: []store.MCPServer{}}}}
		if err := db.CreateRun(ctx, run); err != nil {
			t.Fatal(err)
		}
		if err := db.SetRunStatus(ctx, run.ID, store.RunCompleted, ""); err != nil {
			t.Fatal(err)
		}
	}
	rows := func(doc *goquery.Document) []string {
		var out []string
		doc.Find("#runs tbody tr").Each(func(_ int, tr *goquery.Selection) {
			name := strings.Join(strings.Fields(tr.Find("td").First().Text()), " ")
			out = append(out, name+" | "+strings.TrimSpace(tr.Find("td.mono").Text()))
		})
		return out
	}
	pager := func(doc *goquery.Document) string {
		return strings.Join(strings.Fields(doc.Find("#runs-pager").Text()), " ")
	}
	_, doc := b.get("/runs")
	if got := rows(doc); len(got) != 50 || got[0] != "#120 nightly-120 | baseline, variant-120" || got[49] != "#71 nightly-071 | baseline, variant-71" {
		t.Errorf("the first page: %d runs, %q … %q", len(got), got[0], got[len(got)-1])
	}
	if got := pager(doc); got != "Page 1 of 3 · 120 in all Next →" {
		t.Errorf("the first page's pager: %q", got)
	}
	_, doc = b.get("/runs?page=3")
	if got := rows(doc); len(got) != 20 || got[19] != "#1 nightly-001 | baseline, variant-1" {
		t.Errorf("the last page: %d runs, ending %q", len(got), got[len(got)-1])
	}
	_, doc = b.get("/runs?q=variant-7")
	if got := rows(doc); len(got) != 11 || got[0] != "#79 nightly-079 | baseline, variant-79" || pager(doc) != "" ||
		text(doc, "#runs-clear") != "11 of 120 · show all" {
		t.Errorf("a search: %d runs %q, pager %q, %q", len(got), got, pager(doc), text(doc, "#runs-clear"))
	}
	_, doc = b.get("/runs?q=nightly&page=2")
	next, _ := doc.Find("#runs-pager a").Last().Attr("href")
	if got := rows(doc); len(got) != 50 || got[0] != "#70 nightly-070 | baseline, variant-70" || next != "/runs?q=nightly&page=3" {
		t.Errorf("a search's second page: %d runs from %q, next %q", len(got), got[0], next)
	}
}
