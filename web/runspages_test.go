package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
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
	manyRuns(t, db, 120)
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

// The API lists every run, or a page of them.
func TestRunsAPIPages(t *testing.T) {
	b, db := newServer(t, web.Config{})
	manyRuns(t, db, 7)
	ids := func(path string) (int, []int64) {
		resp, err := b.http.Get(b.srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var list []struct {
			ID         int64    `json:"run_id"`
			Conditions []string `json:"conditions"`
		}
		json.NewDecoder(resp.Body).Decode(&list)
		var out []int64
		for _, r := range list {
			if len(r.Conditions) != 2 {
				t.Errorf("%s: run %d has conditions %q", path, r.ID, r.Conditions)
			}
			out = append(out, r.ID)
		}
		return resp.StatusCode, out
	}
	for path, want := range map[string][]int64{
		"/api/runs":                  {7, 6, 5, 4, 3, 2, 1},
		"/api/runs?limit=3":          {7, 6, 5},
		"/api/runs?limit=3&offset=5": {2, 1},
		"/api/runs?offset=9":         nil,
	} {
		if code, got := ids(path); code != 200 || !slices.Equal(got, want) {
			t.Errorf("%s: %d %v, want %v", path, code, got, want)
		}
	}
	if code, _ := ids("/api/runs?limit=-1"); code != 422 {
		t.Errorf("a negative limit: %d, want 422", code)
	}
}

// manyRuns stores n completed runs of a one-question dataset, named
// nightly-001 on, each under baseline and a condition of its own.
func manyRuns(t *testing.T, db *store.DB, n int) {
	t.Helper()
	ctx := context.Background()
	ds, _, err := ingest.Import(ctx, db, []byte(`{"question": "What is 2 + 2?", "answer": "4"}`+"\n"), ingest.Options{Filename: "qa.jsonl"}, "qa")
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= n; i++ {
		run := &store.Run{Name: fmt.Sprintf("nightly-%03d", i), DatasetID: ds.ID, Config: []byte(`{}`), Repetitions: 1, TotalTasks: 2,
			Conditions: []store.Condition{{Name: "baseline", MCPServers: []store.MCPServer{}}, {Name: fmt.Sprintf("variant-%d", i), MCPServers: []store.MCPServer{}}}}
		if err := db.CreateRun(ctx, run); err != nil {
			t.Fatal(err)
		}
		if err := db.SetRunStatus(ctx, run.ID, store.RunCompleted, ""); err != nil {
			t.Fatal(err)
		}
	}
}

// A run of many conditions names three in the list and counts the rest,
// all of them in the cell's title.
func TestRunsListNamesAFewConditionsOfASweep(t *testing.T) {
	b, db := newServer(t, web.Config{})
	manyRuns(t, db, 1)
	ctx := context.Background()
	run := &store.Run{Name: "sweep", DatasetID: 1, Config: []byte(`{}`), Repetitions: 1, TotalTasks: 12}
	for i := 1; i <= 12; i++ {
		run.Conditions = append(run.Conditions, store.Condition{Name: fmt.Sprintf("temp-%02d", i), MCPServers: []store.MCPServer{}})
	}
	if err := db.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	if err := db.SetRunStatus(ctx, run.ID, store.RunCompleted, ""); err != nil {
		t.Fatal(err)
	}
	_, doc := b.get("/runs")
	cell := doc.Find("#runs tbody tr").First().Find("td.mono")
	title, _ := cell.Attr("title")
	if got := strings.Join(strings.Fields(cell.Text()), " "); got != "temp-01, temp-02, temp-03, and 9 more" || !strings.HasSuffix(title, "temp-11, temp-12") {
		t.Errorf("the sweep's conditions: %q, title %q", got, title)
	}
	if got := strings.TrimSpace(doc.Find("#runs tbody tr").Last().Find("td.mono").Text()); got != "baseline, variant-1" {
		t.Errorf("a run of two: %q", got)
	}
}
