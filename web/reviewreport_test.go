package web_test

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"assay/store"
	"assay/web"
)

// TestReviewsInTheReport overrides the judge's two 2s of one sample with
// 5s and checks every place the report shows reviews: coverage and
// agreement, the summary with reviews applied (3.25 → 4.00 by hand), the
// samples filters and the exports.
func TestReviewsInTheReport(t *testing.T) {
	b, db := newServer(t, web.Config{})
	id, samples := handRunIn(t, db, store.RunCompleted)
	page := fmt.Sprintf("/runs/%d", id)
	_, doc := b.get(page)
	if doc.Find("#reviews-empty").Length() != 1 || doc.Find("#review-switch").Length() != 0 {
		t.Fatal("a run without verdicts should say so, and offer no switch")
	}
	results, _ := db.SampleResults(t.Context(), id, samples[3])
	var overridden []int64
	for _, r := range results {
		for _, j := range r.Judgements {
			for _, s := range j.Scores {
				if r.Condition == "baseline" && s.Metric == "factual_adherence" {
					overridden = append(overridden, s.ID)
				}
			}
		}
	}
	if len(overridden) != 2 {
		t.Fatalf("%d scores to override", len(overridden))
	}
	for _, sid := range overridden {
		if code, body := api(t, b, "POST", fmt.Sprintf("/api/runs/%d/reviews", id), "", map[string]any{"score_id": sid, "verdict": "override",
			"value": 5, "note": "the docs say so", "reviewer": "ann"}); code != 201 {
			t.Fatalf("override: %d %s", code, body)
		}
	}
	agree := scoreOf(t, db, id, "exact_match", "exact_match", 0)
	api(t, b, "POST", fmt.Sprintf("/api/runs/%d/reviews", id), "", map[string]any{"score_id": agree.ID, "verdict": "agree", "reviewer": "ben"})

	// The report noticed the verdicts: its cache holds no stale report.
	_, doc = b.get(page)
	fa := cells(doc, "#agreement", "rubric · factual_adherence")
	if len(fa) < 11 || fa[1] != "2" || fa[2] != "2" || fa[3] != "0%" || fa[5] != "3.00" {
		t.Errorf("agreement row %q: 2 reviewed, 2 overridden, 0%% exact, MAD 3", fa)
	}
	if cov := cells(doc, "#review-coverage", "rubric · factual_adherence"); len(cov) != 10 || cov[1] != "baseline" || cov[2] != "2" || cov[3] != "8" || cov[7] != "0" {
		t.Errorf("coverage row %q: 2 of baseline's 8", cov)
	}
	if row := cells(doc, "#summary", "baseline"); row[1] != "3.25" {
		t.Errorf("as judged, baseline's mean is %q, want 3.25", row[1])
	}
	if doc.Find("#chart-confusion-0").Length() != 1 {
		t.Error("no confusion heatmap")
	}
	_, doc = b.get(page + "?view=reviewed")
	if row := cells(doc, "#summary", "baseline"); row[1] != "4.00" {
		t.Errorf("with reviews applied, baseline's mean is %q, want 4.00", row[1])
	}
	if !strings.Contains(doc.Find("#review-switch").Text(), "2 overrides replace") {
		t.Errorf("switch says %q", doc.Find("#review-switch").Text())
	}
	if href, _ := doc.Find("#view-judged").Attr("href"); strings.Contains(href, "view=") {
		t.Errorf("the way back to the judge's view is %q", href)
	}

	// Samples: filter by verdicts.
	count := func(query string) int {
		_, doc := b.get(fmt.Sprintf("/runs/%d/samples?%s", id, query))
		return doc.Find("#samples tbody tr").Length()
	}
	if n := count("review=overridden"); n != 1 {
		t.Errorf("overridden rows: %d, want 1", n)
	}
	if n := count("review=reviewed"); n != 2 {
		t.Errorf("reviewed rows: %d, want 2", n)
	}
	if n := count("reviewer=ben"); n != 1 {
		t.Errorf("ben's rows: %d, want 1", n)
	}
	if all, un := count(""), count("review=unreviewed"); un != all-2 {
		t.Errorf("unreviewed rows %d of %d", un, all)
	}

	// Exports carry every score's id and its verdicts.
	resp, _ := b.http.Get(b.srv.URL + page + "/export.json")
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var exp struct {
		Results []struct {
			Scores []struct {
				ID      int64
				Reviews []struct {
					Reviewer, Verdict, Note string
					Value                   float64
				}
			}
		}
	}
	if err := json.Unmarshal(body, &exp); err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, r := range exp.Results {
		for _, s := range r.Scores {
			if s.ID == 0 {
				t.Fatal("a score without its id in the JSON export")
			}
			if len(s.Reviews) == 1 && s.Reviews[0].Reviewer == "ann" && s.Reviews[0].Value == 5 && s.Reviews[0].Note == "the docs say so" {
				found++
			}
		}
	}
	if found != 2 {
		t.Errorf("%d overridden scores with their review in the JSON export, want 2", found)
	}
	resp, _ = b.http.Get(b.srv.URL + page + "/export.csv")
	rows, err := csv.NewReader(resp.Body).ReadAll()
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	reviewed := 0
	for _, r := range rows[1:] {
		if r[21] == "5" && r[20] == "1" {
			reviewed++
		}
	}
	if rows[0][21] != "reviewed_value" || reviewed != 2 {
		t.Errorf("CSV: header %q, %d reviewed rows", rows[0][19:], reviewed)
	}
}

// A report kept across verdicts shows after each one what a server that
// computes it afresh shows: new reviews, the same figures. Verdicts by two
// reviewers on one score, one given again, one on another metric.
func TestReportKeptAcrossVerdicts(t *testing.T) {
	b, db := newServer(t, web.Config{})
	id, samples := handRunIn(t, db, store.RunCompleted)
	report := func(b *browser, page string) string {
		t.Helper()
		_, doc := b.get(page)
		html, err := doc.Find("#report").Html()
		if err != nil || html == "" {
			t.Fatalf("no report: %v", err)
		}
		return html
	}
	judged, reviewed := fmt.Sprintf("/runs/%d", id), fmt.Sprintf("/runs/%d?view=reviewed", id)
	report(b, judged) // kept with no verdict, in both views
	report(b, reviewed)
	fa, ex := scoreOf(t, db, id, "rubric", "factual_adherence", 1), scoreOf(t, db, id, "exact_match", "exact_match", 0)
	for i, v := range []map[string]any{
		{"score_id": fa.ID, "verdict": "override", "value": 5, "reviewer": "ann"},
		{"score_id": fa.ID, "verdict": "agree", "reviewer": "ben"},
		{"score_id": fa.ID, "verdict": "override", "value": 1, "reviewer": "ann"},
		{"score_id": ex.ID, "verdict": "override", "value": 0, "reviewer": "ben"},
		{"score_id": fa.ID, "verdict": "override", "value": 3, "reviewer": "carl"}, // after a result came
	} {
		if i == 4 {
			saveHandResult(t, db, id, samples[0], "baseline", 7, [2][]float64{})
		}
		if code, body := api(t, b, "POST", fmt.Sprintf("/api/runs/%d/reviews", id), "", v); code != 201 {
			t.Fatalf("verdict %d: %d %s", i, code, body)
		}
		var kept string
		for _, page := range []string{judged, reviewed} {
			kept = report(b, page)
			fresh, _ := web.New(db, web.Config{})
			srv := httptest.NewServer(fresh.Handler())
			again := report(&browser{t: t, srv: srv, http: srv.Client()}, page)
			srv.Close()
			if kept != again {
				t.Fatalf("after verdict %d the kept report %s differs from the one computed again:\n%s", i, page, firstDifference(kept, again))
			}
		}
		if want := fmt.Sprintf("%d verdict", []int{1, 2, 2, 3, 4}[i]); !strings.Contains(kept, want) { // ann's given again replaces hers
			t.Errorf("after verdict %d the report does not say %q", i, want)
		}
	}

	// A server that computed the report as judged derives the view with
	// reviews applied from it: the same as computed afresh.
	fresh := func() *browser {
		s, _ := web.New(db, web.Config{})
		srv := httptest.NewServer(s.Handler())
		t.Cleanup(srv.Close)
		return &browser{t: t, srv: srv, http: srv.Client()}
	}
	judgedFirst := fresh()
	report(judgedFirst, judged)
	if derived, again := report(judgedFirst, reviewed), report(fresh(), reviewed); derived != again {
		t.Fatalf("the view with reviews applied, derived from the report as judged, differs:\n%s", firstDifference(derived, again))
	}
}

// firstDifference shows where two texts part.
func firstDifference(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	from := max(i-200, 0)
	return fmt.Sprintf("…%s\n---\n…%s", a[from:min(i+200, len(a))], b[from:min(i+200, len(b))])
}

// One override of one score: the report says so in one plain sentence
// ("1 verdict on 1 score by Dr Lee.", "1 override by a reviewer is not
// counted"), and gives no kappa of a single score ("too few reviews").
// A share link's reader is not sent to Settings for prices.
func TestAReportOfOneReviewSaysItPlainly(t *testing.T) {
	b, db := newServer(t, web.Config{})
	id, _ := handRunIn(t, db, store.RunCompleted)
	rubric := scoreOf(t, db, id, "rubric", "factual_adherence", 0)
	other := 5.0
	if rubric.Value == 5 {
		other = 1
	}
	if code, body := api(t, b, "POST", fmt.Sprintf("/api/runs/%d/reviews", id), "", map[string]any{"score_id": rubric.ID,
		"verdict": "override", "value": other, "reviewer": "Dr Lee"}); code != 201 {
		t.Fatalf("review: %d %s", code, body)
	}
	_, doc := b.get(fmt.Sprintf("/runs/%d", id))
	if got := text(doc, "#reviews ~ .explain"); !strings.Contains(got, "1 verdict on 1 score by Dr Lee. Agreement") {
		t.Errorf("the reviews' sentence: %q", got)
	}
	if got := text(doc, "#review-switch"); !strings.Contains(got, "1 override by a reviewer is not counted in this view") {
		t.Errorf("the switch says %q", got)
	}
	row := doc.Find("#agreement tbody tr").First()
	if got := row.Text(); !strings.Contains(got, "too few reviews") || strings.Contains(got, "0.00 [0.00, 0.00]") {
		t.Errorf("the agreement of one score: %q", got)
	}
	if got := text(doc, "#report-facts"); !strings.Contains(got, "add one in Settings") {
		t.Errorf("the owner is not told where prices are added: %q", got)
	}
	sh, err := db.CreateShare(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	_, doc = b.get("/r/" + sh.Token)
	if got := doc.Text(); !strings.Contains(got, "no price: counted as free") || strings.Contains(got, "Settings") {
		t.Error("a share link's reader is sent to Settings, which they cannot open")
	}
}
