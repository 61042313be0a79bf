package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"assay"
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
			out = append(out, name+" | "+strings.Join(strings.Fields(tr.Find("td.run-conditions").Text()), ", "))
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

// The API lists every run, or a page of them. Every run is sent as it is
// read, three at a time here: the same list, byte for byte, as a page of
// all of them.
func TestRunsAPIPages(t *testing.T) {
	defer web.SetRunsPage(3)()
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
		"/api/runs?offset=2":         {5, 4, 3, 2, 1},
		"/api/runs?offset=4":         {3, 2, 1},
	} {
		if code, got := ids(path); code != 200 || !slices.Equal(got, want) {
			t.Errorf("%s: %d %v, want %v", path, code, got, want)
		}
	}
	if code, _ := ids("/api/runs?limit=-1"); code != 422 {
		t.Errorf("a negative limit: %d, want 422", code)
	}
	body := func(path string) string {
		resp, err := b.http.Get(b.srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("%s: Content-Type %q", path, ct)
		}
		data, _ := io.ReadAll(resp.Body)
		return string(data)
	}
	if all, page := body("/api/runs"), body("/api/runs?limit=100"); all != page {
		t.Errorf("every run streamed:\n%s\na page of them all:\n%s", all, page)
	}
	if none, page := body("/api/runs?offset=9"), body("/api/runs?limit=100&offset=9"); none != "[]\n" || page != none {
		t.Errorf("no run: %q, a page of none: %q", none, page)
	}
}

// manyRuns stores n completed runs of a one-question dataset, named
// nightly-001 on, each under baseline and a condition of its own.
func manyRuns(t testing.TB, db *store.DB, n int) {
	t.Helper()
	ctx := context.Background()
	ds, _, err := ingest.Import(ctx, db, []byte(`{"question": "What is 2 + 2?", "answer": "4"}`+"\n"), ingest.Options{Filename: "qa.jsonl"}, "qa")
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= n; i++ {
		run := &store.Run{Name: fmt.Sprintf("nightly-%03d", i), DatasetID: ds.ID, Repetitions: 1, TotalTasks: 2,
			Conditions: []assay.Condition{{Name: "baseline", MCPServers: []assay.MCPServer{}}, {Name: fmt.Sprintf("variant-%d", i), MCPServers: []assay.MCPServer{}}}}
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
	run := &store.Run{Name: "sweep", DatasetID: 1, Repetitions: 1, TotalTasks: 12}
	for i := 1; i <= 12; i++ {
		run.Conditions = append(run.Conditions, assay.Condition{Name: fmt.Sprintf("temp-%02d", i), MCPServers: []assay.MCPServer{}})
	}
	if err := db.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	if err := db.SetRunStatus(ctx, run.ID, store.RunCompleted, ""); err != nil {
		t.Fatal(err)
	}
	_, doc := b.get("/runs")
	cell := doc.Find("#runs tbody tr").First().Find("td.run-conditions")
	title, _ := cell.Attr("title")
	lines := func(cell *goquery.Selection) string {
		var out []string
		cell.Find(".cond").Each(func(_ int, s *goquery.Selection) { out = append(out, strings.TrimSpace(s.Text())) })
		return strings.Join(out, " | ")
	}
	if got := lines(cell); got != "temp-01 | temp-02 | temp-03 | and 9 more" || !strings.HasSuffix(title, "temp-11, temp-12") {
		t.Errorf("the sweep's conditions: %q, title %q", got, title)
	}
	if got := lines(doc.Find("#runs tbody tr").Last().Find("td.run-conditions")); got != "baseline | variant-1" {
		t.Errorf("a run of two: %q", got)
	}
}

// A dataset of many runs ranks them all and shows the best on its
// leaderboard; each run's page lists the last twenty others.
func TestManyRunsOfADataset(t *testing.T) {
	b, db := newServer(t, web.Config{})
	manyRuns(t, db, 40)
	ctx := context.Background()
	for id := int64(1); id <= 40; id++ {
		mean := float64((id*7)%40) / 10 // 0.0 to 3.9, each once
		h := fmt.Sprintf(`{"metric": "rubric · factual_adherence", "digits": 2, "conditions": [{"name": "baseline", "mean": %g, "ci95": [0, 5], "n": 1}, {"name": "variant-%d", "mean": 0.01, "ci95": [0, 5], "n": 1}]}`, mean, id)
		if err := db.SetRunHeadline(ctx, id, h); err != nil {
			t.Fatal(err)
		}
	}
	_, doc := b.get("/datasets/1")
	rows := doc.Find("#leaderboard-1 tbody tr")
	var cells []string
	rows.First().Find("td").Each(func(_ int, td *goquery.Selection) {
		cells = append(cells, strings.Join(strings.Fields(td.Text()), " "))
	})
	first := strings.Join(cells[:5], " | ")
	if rows.Length() != 25 || first != "1 | baseline | nightly-017 #17 |  | 3.90" {
		t.Errorf("the leaderboard: %d rows, first %q", rows.Length(), first)
	}
	if got := strings.Join(strings.Fields(text(doc, "#leaderboard-1-more")), " "); got != "The best 25 of 80; the Runs page lists every run." {
		t.Errorf("the leaderboard's note: %q", got)
	}
	_, doc = b.get("/runs/40")
	var others []string
	doc.Find("#other-runs-table tbody tr").Each(func(_ int, tr *goquery.Selection) {
		others = append(others, strings.Join(strings.Fields(tr.Find("td").First().Text()), " ")+" | "+tr.Find("td.mono").Text())
	})
	if len(others) != 20 || others[0] != "#39 nightly-039 | baseline, variant-39" || others[19] != "#20 nightly-020 | baseline, variant-20" {
		t.Errorf("the run's others: %q", others)
	}
}
