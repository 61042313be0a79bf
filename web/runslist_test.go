package web_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"assay/store"
	"assay/web"
)

// The list of runs gives each finished run its headline figure, and finds
// runs by the tags and note people gave them.
func TestRunsListHeadlineTagsAndSearch(t *testing.T) {
	f := newRunServer(t, rubricAgent("4"))
	ds := f.qaDataset(2)
	conds := f.conditions("baseline", "careful")
	first := f.launch(f.runForm(ds, conds))
	f.waitFor(first, store.RunCompleted)
	second := f.launch(f.runForm(ds, conds[:1]))
	f.waitFor(second, store.RunCompleted)

	_, doc := f.get(fmt.Sprintf("/runs/%d", first))
	if doc.Find("#about-run-form").Length() != 1 {
		t.Fatal("the run page has no form for tags and a note")
	}
	f.postForm(fmt.Sprintf("/runs/%d/notes", first), url.Values{"tags": {"Nightly, gpt-4o,  nightly ,"}, "note": {"Tried the docs server."}})
	run, _ := f.db.Run(context.Background(), first)
	if strings.Join(run.Tags, "|") != "nightly|gpt-4o" || run.Note != "Tried the docs server." {
		t.Errorf("tags %q, note %q", run.Tags, run.Note)
	}

	_, doc = f.get("/runs")
	row := doc.Find("#runs tbody tr").Last() // oldest last: the first run
	var cells []string
	row.Find("td.headline div").Each(func(_ int, d *goquery.Selection) { cells = append(cells, strings.Join(strings.Fields(d.Text()), " ")) })
	if metric := strings.TrimSpace(row.Find("td.headline .hint").Text()); metric != "rubric · factual_adherence" || strings.Join(cells, "|") != "baseline 4.00|careful 4.00" {
		t.Errorf("headline %q: %q", metric, cells)
	}
	var tags []string
	row.Find(".tags .tag").Each(func(_ int, a *goquery.Selection) { tags = append(tags, a.Text()) })
	if strings.Join(tags, "|") != "nightly|gpt-4o" {
		t.Errorf("tags shown %q", tags)
	}
	if run, _ := f.db.Run(context.Background(), first); run.Headline == "" {
		t.Error("the headline was not kept on the run")
	}
	for q, want := range map[string]int{"nightly": 1, "docs server": 1, "careful": 1, "baseline": 2, "nothing-like-it": 0} {
		_, doc := f.get("/runs?q=" + url.QueryEscape(q))
		if n := doc.Find("#runs tbody tr").Length(); n != want {
			t.Errorf("q=%q: %d runs, want %d", q, n, want)
		}
	}
	// The list built the second run's report, never shown before, and keeps
	// it for the run's page: whole, with its condition.
	if resp, doc := f.get(fmt.Sprintf("/runs/%d", second)); resp.StatusCode != 200 || doc.Find("#summary tbody tr").Length() != 1 {
		t.Fatalf("the run's page after the list: %d, %d rows in its summary", resp.StatusCode, doc.Find("#summary tbody tr").Length())
	}
	_, doc = f.get("/runs?q=nothing-like-it")
	if !strings.Contains(text(doc, "#runs-none"), "No run matches") {
		t.Error("an empty search says nothing")
	}
}

// A finished run without a score (every answer failed) shows no headline,
// and keeps that: its report is not built again for every list.
func TestRunsListKeepsThatARunHasNoScore(t *testing.T) {
	b, db := newServer(t, web.Config{})
	sr := storeRun(t, db, "failed.jsonl", jsonl(map[string]any{"question": "Q?", "answer": "A."}), []string{"baseline"}, 2,
		func(store.Sample, string, int) store.Result {
			return store.Result{Error: "agent: timeout", ErrorKind: store.ErrorTimeout, Attempts: 1}
		})
	for range 2 {
		_, doc := b.get("/runs")
		if row := doc.Find("#runs tbody tr"); row.Length() != 1 || row.Find("td.headline div").Length() != 0 {
			t.Fatalf("the failed run's row: %q", strings.Join(strings.Fields(row.Text()), " "))
		}
		run, _ := db.Run(context.Background(), sr.Run.ID)
		if run.Headline == "" {
			t.Fatal("a run without a score keeps no headline: every list builds its report again")
		}
	}
}
