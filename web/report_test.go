package web_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"assay/internal/pgtest"
	"assay/report"
	"assay/stats"
	"assay/store"
	"assay/web"
)

// cells returns the text of each cell of the table row whose first cell is name.
func cells(doc *goquery.Document, table, name string) []string {
	var out []string
	doc.Find(table + " tbody tr").Each(func(_ int, tr *goquery.Selection) {
		if strings.TrimSpace(tr.Find("td").First().Text()) != name {
			return
		}
		tr.Find("td").Each(func(_ int, td *goquery.Selection) {
			out = append(out, strings.Join(strings.Fields(td.Text()), " "))
		})
	})
	return out
}

func TestReportSummaryOfAHandCheckedRun(t *testing.T) {
	b, db := newServer(t, web.Config{})
	id, _ := handRunIn(t, db, store.RunCompleted)
	_, doc := b.get(fmt.Sprintf("/runs/%d", id))

	tests := []struct {
		table, condition string
		want             []string
	}{
		// condition | factual_adherence: mean std stderr CI n | exact_match: … | errors: agent judge
		{"#summary", "baseline", []string{"baseline", "3.25", "1.26", "0.63", "1.25 – 5.00", "8",
			"0.500", "0.408", "0.204", "0.000 – 1.000", "8", "2", "0"}},
		{"#summary", "with-docs", []string{"with-docs", "3.00", "1.41", "0.63", "1.24 – 4.76", "10",
			"0.500", "0.500", "0.224", "0.000 – 1.000", "10", "0", "0"}},
		// spread and disagreement: baseline s2 scored 4 then 2 (std 1.41) of four samples
		{"#spread", "baseline", []string{"baseline", "0.35", "25%", "0.354", "50%"}},
		// results, retried, tokens in/out, latency, cost (agent 10 × $0.001, judge 8 × $0.0005), quality, per $
		{"#cost", "baseline", []string{"baseline", "10", "0", "1.4k", "280", "400 ms", "$0.014", "0.531", "37.9"}},
	}
	for _, tc := range tests {
		if got := cells(doc, tc.table, tc.condition); strings.Join(got, " | ") != strings.Join(tc.want, " | ") {
			t.Errorf("%s %s:\n got %q\nwant %q", tc.table, tc.condition, got, tc.want)
		}
	}
	for sel, want := range map[string]string{"#report-sha256": "feedc0de", "#agent-model": "agent " + xssScript,
		"#judge-model": "judge-model", "#report-conditions": "baseline, with-docs", "#report-cost": "$0.029",
		"#report-errors": "2 errors"} {
		if got := text(doc, sel); got != want {
			t.Errorf("%s = %q, want %q", sel, got, want)
		}
	}
	if _, polling := doc.Find("#report").Attr("hx-trigger"); polling {
		t.Error("a finished run's report should not refresh itself")
	}
}

func TestReportAgreesWithTheRunnerSummary(t *testing.T) {
	b, db := newServer(t, web.Config{})
	id, _ := handRunIn(t, db, store.RunCompleted)
	sum, err := report.Summarize(context.Background(), db, id)
	if err != nil {
		t.Fatal(err)
	}
	_, doc := b.get(fmt.Sprintf("/runs/%d", id))
	for _, c := range sum.Conditions {
		row := cells(doc, "#summary", c.Name)
		for i, m := range c.Metrics {
			digits := map[string]int{"rubric": 2}[m.Evaluator]
			if digits == 0 {
				digits = 3
			}
			mean, std := fmt.Sprintf("%.*f", digits, m.Mean), fmt.Sprintf("%.*f", digits, m.Std)
			if got := row[1+5*i : 3+5*i]; got[0] != mean || got[1] != std || row[5+5*i] != fmt.Sprint(m.N) {
				t.Errorf("%s %s: page %q, runner mean %s std %s n %d", c.Name, m.Name, row, mean, std, m.N)
			}
		}
	}
}

func TestPairedComparisonOfTwoConditions(t *testing.T) {
	b, db := newServer(t, web.Config{})
	id, samples := handRunIn(t, db, store.RunCompleted)
	// with-docs − baseline per sample on factual_adherence, s1–s4 (s5 has no baseline score).
	want := stats.PairedBootstrap([]float64{4, 4, 4, 2}, []float64{3, 3, 5, 2}, 0, 1)
	_, sd := stats.Describe([]float64{1, 1, -1, 0})
	mdd := fmt.Sprintf("± %.2f", stats.MinDetectable(sd, 4, 0.05, 0.8))
	tests := []struct {
		query, a, b, diff, ci string
		wins, losses          string
	}{
		{"", "baseline", "with-docs", "+0.25", fmt.Sprintf("%+.2f – %+.2f", want.CILo, want.CIHi), "2", "1"},
		{"?a=with-docs&b=baseline", "with-docs", "baseline", "-0.25", fmt.Sprintf("%+.2f – %+.2f", -want.CIHi, -want.CILo), "1", "2"},
	}
	for _, tc := range tests {
		_, doc := b.get(fmt.Sprintf("/runs/%d%s", id, tc.query))
		if a, _ := doc.Find("#pair-a option[selected]").Attr("value"); a != tc.a {
			t.Errorf("%q: A is %q, want %q", tc.query, a, tc.a)
		}
		row := cells(doc, "#paired-table", "rubric · factual_adherence 1–5")
		wantRow := []string{"rubric · factual_adherence 1–5", map[bool]string{true: "3.25", false: "3.50"}[tc.a == "baseline"],
			map[bool]string{true: "3.50", false: "3.25"}[tc.a == "baseline"], tc.diff, tc.ci, tc.wins, "1", tc.losses, "4", mdd}
		if strings.Join(row, " | ") != strings.Join(wantRow, " | ") {
			t.Errorf("%q:\n got %q\nwant %q", tc.query, row, wantRow)
		}
	}
	_, doc := b.get(fmt.Sprintf("/runs/%d", id))
	first := doc.Find("#gaps tbody tr").First()
	href, _ := first.Find("a").Attr("href")
	if href != fmt.Sprintf("/runs/%d/samples/%d", id, samples[0]) || !strings.Contains(first.Text(), "+0.38") {
		t.Errorf("largest gap links to %q: %q", href, strings.Join(strings.Fields(first.Text()), " "))
	}
	if n := doc.Find("#gaps tbody tr").Length(); n != 4 {
		t.Errorf("%d samples with a gap, want 4 (s1–s4 differ, s5 is only under with-docs)", n)
	}
}

func TestReportOfARunningRunRefreshesItself(t *testing.T) {
	b, db := newServer(t, web.Config{})
	id, _ := handRunIn(t, db, store.RunRunning)
	_, doc := b.get(fmt.Sprintf("/runs/%d?a=with-docs&b=baseline", id))
	get, _ := doc.Find("#report").Attr("hx-get")
	if !strings.HasPrefix(get, fmt.Sprintf("/runs/%d/report?a=with-docs&b=baseline&since=", id)) {
		t.Errorf("report refreshes from %q", get)
	}
	resp, frag := b.get(fmt.Sprintf("/runs/%d/report?a=with-docs&b=baseline", id))
	if resp.StatusCode != 200 || frag.Find("#summary").Length() != 1 || frag.Find("header").Length() != 0 {
		t.Errorf("fragment: %d, summary %d, layout %d", resp.StatusCode, frag.Find("#summary").Length(), frag.Find("header").Length())
	}
}

func TestReportOfARunWithoutResults(t *testing.T) {
	b, db := newServer(t, web.Config{})
	id, _ := storeScoredRun(t, db, store.RunRunning, "empty", map[string][][2][]float64{})
	_, doc := b.get(fmt.Sprintf("/runs/%d", id))
	if !strings.Contains(text(doc, "#report-empty"), "No results yet") || doc.Find(".chart").Length() != 0 {
		t.Errorf("empty report: %q, %d charts", text(doc, "#report-empty"), doc.Find(".chart").Length())
	}
}

func TestReportFollowsNewResults(t *testing.T) {
	b, db := newServer(t, web.Config{})
	id, samples := handRunIn(t, db, store.RunRunning)
	path := fmt.Sprintf("/runs/%d/report", id)
	_, doc := b.get(path)
	if got := cells(doc, "#summary", "baseline")[5]; got != "8" {
		t.Fatalf("baseline n = %s, want 8", got)
	}
	// s5 gets a baseline score at last: the cached report must not hide it.
	saveHandResult(t, db, id, samples[4], "baseline", 3, [2][]float64{{0, 0, 4}, {0, 0, 1}})
	_, doc = b.get(path)
	if got := cells(doc, "#summary", "baseline")[5]; got != "9" {
		t.Errorf("after a new result baseline n = %s, want 9", got)
	}
	if err := db.SetRunStatus(t.Context(), id, store.RunCompleted, ""); err != nil {
		t.Fatal(err)
	}
	_, doc = b.get(path)
	if _, polling := doc.Find("#report").Attr("hx-trigger"); polling {
		t.Error("once the run is over its report should stop refreshing")
	}
}

// A run whose stored config cannot be read (written by hand, or by a
// release that shaped a setting otherwise) says so on its page, and the
// list of runs still lists it with the others.
func TestAStoredConfigThatCannotBeReadIsShown(t *testing.T) {
	b, db := newServer(t, web.Config{})
	id, _ := handRunIn(t, db, store.RunCompleted)
	run, _ := db.Run(t.Context(), id)
	broken := &store.Run{Name: "broken", DatasetID: run.DatasetID, Conditions: run.Conditions, Repetitions: 1, TotalTasks: 1}
	if err := db.CreateRun(t.Context(), broken); err != nil {
		t.Fatal(err)
	}
	raw, err := pgtest.OpenRaw(db.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(`UPDATE runs SET config = '{"execution": "three times"}' WHERE id = $1`, broken.ID); err != nil {
		t.Fatal(err)
	}
	resp, doc := b.get(fmt.Sprintf("/runs/%d", broken.ID))
	if resp.StatusCode != 500 || !strings.Contains(doc.Text(), fmt.Sprintf("Run %d's stored config cannot be read", broken.ID)) {
		t.Errorf("%d: %q", resp.StatusCode, text(doc, "main"))
	}
	resp, doc = b.get("/runs")
	if resp.StatusCode != 200 || !strings.Contains(text(doc, "main"), "broken") || !strings.Contains(text(doc, "main"), run.Name) {
		t.Errorf("the runs page should list both runs: %d %q", resp.StatusCode, text(doc, "main"))
	}
}
