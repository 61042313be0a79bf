package web_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"assay/stats"
	"assay/store"
	"assay/web"
)

// regressed is the hand-checked run with baseline's s3 dropped from 5, 5 to 1, 1.
func regressed() map[string][][2][]float64 {
	table := map[string][][2][]float64{}
	for c, rows := range handRun {
		table[c] = append([][2][]float64(nil), rows...)
	}
	table["baseline"][2] = [2][]float64{{1, 1}, {1, 1}}
	return table
}

func TestCompareTwoRunsOfADataset(t *testing.T) {
	b, db := newServer(t, web.Config{})
	a, samples := handRunIn(t, db, store.RunCompleted)
	bID, _ := storeScoredRun(t, db, store.RunCompleted, "feedc0de", regressed())

	_, doc := b.get(fmt.Sprintf("/runs/%d", a))
	href, _ := doc.Find("#other-runs-table .compare-link").Attr("href")
	if href != fmt.Sprintf("/compare?a=%d&b=%d", a, bID) {
		t.Fatalf("the run page links to %q to compare", href)
	}
	_, doc = b.get(href)
	section := doc.Find(`section[data-condition="baseline"]`)
	row := cells(doc, `section[data-condition="baseline"] #paired-table`, "rubric · factual_adherence 1–5")
	// factual_adherence per sample, run B − run A: 0, 0, −4, 0 on s1–s4.
	_, sd := stats.Describe([]float64{0, 0, -4, 0})
	mdd := fmt.Sprintf("± %.2f", stats.MinDetectable(sd, 4, 0.05, 0.8))
	if got := strings.Join(row[1:4], " "); len(row) != 10 || got != "3.25 2.25 -1.00" || row[8] != "4" || row[9] != mdd {
		t.Errorf("baseline factual_adherence, A vs B: %q", row)
	}
	first := section.Find("#regressions-baseline tbody tr").First()
	link, _ := first.Find("a").Attr("href")
	if link != fmt.Sprintf("/runs/%d/samples/%d", bID, samples[2]) || section.Find("#regressions-baseline tbody tr").Length() != 1 {
		t.Errorf("regressions: first links to %q, %d rows", link, section.Find("#regressions-baseline tbody tr").Length())
	}
	if n := doc.Find(`section[data-condition="with-docs"] #regressions-with-docs tbody tr`).Length(); n != 0 {
		t.Errorf("with-docs is unchanged, yet %d samples regressed", n)
	}
}

// The comparison is kept with the reports, and computed again when either
// run changes: here run B gets the results of a sample it lacked.
func TestCompareFollowsTheRuns(t *testing.T) {
	b, db := newServer(t, web.Config{})
	a, samples := handRunIn(t, db, store.RunCompleted)
	short := regressed()
	short["baseline"] = short["baseline"][:3] // s4 and s5 unanswered under baseline
	bID, _ := storeScoredRun(t, db, store.RunCompleted, "feedc0de", short)
	page := fmt.Sprintf("/compare?a=%d&b=%d", a, bID)
	n := func() string {
		t.Helper()
		_, doc := b.get(page)
		row := cells(doc, `section[data-condition="baseline"] #paired-table`, "rubric · factual_adherence 1–5")
		if len(row) != 10 {
			t.Fatalf("baseline factual_adherence: %q", row)
		}
		return row[8]
	}
	if got := n(); got != "3" {
		t.Fatalf("%s samples compared, want s1–s3", got)
	}
	if got := n(); got != "3" {
		t.Fatalf("%s samples compared on the second view, want s1–s3", got)
	}
	for rep := 1; rep <= 2; rep++ {
		saveHandResult(t, db, bID, samples[3], "baseline", rep, handRun["baseline"][3])
	}
	if got := n(); got != "4" {
		t.Errorf("%s samples compared once run B answered s4, want 4", got)
	}
}

func TestCompareRefusesRunsOfOtherDatasets(t *testing.T) {
	b, db := newServer(t, web.Config{})
	a, _ := handRunIn(t, db, store.RunCompleted)
	other, _ := storeScoredRun(t, db, store.RunCompleted, "0ther", handRun)
	for _, q := range []string{fmt.Sprintf("a=%d&b=%d", a, other), "a=x&b=1", ""} {
		resp, doc := b.get("/compare?" + q)
		if resp.StatusCode != http.StatusUnprocessableEntity {
			t.Errorf("compare?%s: %d %q", q, resp.StatusCode, text(doc, ".flash"))
		}
	}
}
