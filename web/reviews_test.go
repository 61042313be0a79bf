package web_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"assay/store"
	"assay/web"
)

// scoreOf finds a score of the run by evaluator and metric.
func scoreOf(t *testing.T, db *store.DB, runID int64, evaluator, metric string, skip int) store.Score {
	t.Helper()
	results, err := db.Results(t.Context(), runID)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		for _, j := range r.Judgements {
			for _, s := range j.Scores {
				if j.Evaluator == evaluator && s.Metric == metric {
					if skip == 0 {
						return s
					}
					skip--
				}
			}
		}
	}
	t.Fatalf("no %s.%s score", evaluator, metric)
	return store.Score{}
}

// api sends a JSON request and returns the status and the body.
func api(t *testing.T, b *browser, method, path, bearer string, body any) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		j, _ := json.Marshal(body)
		rd = bytes.NewReader(j)
	}
	req, _ := http.NewRequest(method, b.srv.URL+path, rd)
	req.Header.Set("Content-Type", "application/json")
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(out)
}

func TestReviewAPI(t *testing.T) {
	b, db := newServer(t, web.Config{})
	id, _ := handRunIn(t, db, store.RunCompleted)
	rubric := scoreOf(t, db, id, "rubric", "factual_adherence", 0)
	exact := scoreOf(t, db, id, "exact_match", "exact_match", 0)
	path := fmt.Sprintf("/api/runs/%d/reviews", id)
	post := func(body map[string]any) (int, string) { return api(t, b, "POST", path, "", body) }

	if code, body := post(map[string]any{"score_id": rubric.ID, "verdict": "agree", "reviewer": "ann"}); code != http.StatusCreated ||
		!strings.Contains(body, `"reviewer":"ann"`) || !strings.Contains(body, `"verdict":"agree"`) {
		t.Fatalf("agree: %d %s", code, body)
	}
	for _, tc := range []struct {
		body map[string]any
		code int
		want string
	}{
		{map[string]any{"score_id": rubric.ID, "verdict": "override", "value": 7, "reviewer": "ann"}, 422, "1–5 scale: 7 is outside it"},
		{map[string]any{"score_id": rubric.ID, "verdict": "override", "value": 4.5, "reviewer": "ann"}, 422, "whole numbers"},
		{map[string]any{"score_id": rubric.ID, "verdict": "override", "reviewer": "ann"}, 422, "needs the value"},
		{map[string]any{"score_id": exact.ID, "verdict": "override", "value": 0.5, "reviewer": "ann"}, 422, "whole numbers"},
		{map[string]any{"score_id": 999999, "verdict": "agree", "reviewer": "ann"}, 404, "has no score 999999"},
		{map[string]any{"score_id": rubric.ID, "verdict": "maybe", "reviewer": "ann"}, 422, "agree or override"},
		{map[string]any{"score_id": rubric.ID, "verdict": "agree"}, 422, "reviewer's name"},
	} {
		if code, body := post(tc.body); code != tc.code || !strings.Contains(body, tc.want) {
			t.Errorf("%v: %d %s, want %d saying %q", tc.body, code, body, tc.code, tc.want)
		}
	}
	if code, body := post(map[string]any{"score_id": exact.ID, "verdict": "override", "value": 1 - exact.Value, "note": "<b>wrong</b>", "reviewer": "ann"}); code != 201 {
		t.Fatalf("override exact_match: %d %s", code, body)
	}
	if code, body := post(map[string]any{"score_id": rubric.ID, "verdict": "override", "value": 1, "reviewer": "ben"}); code != 201 {
		t.Fatalf("ben: %d %s", code, body)
	}
	var list struct{ Reviews []store.Review }
	_, body := api(t, b, "GET", path, "", nil)
	json.Unmarshal([]byte(body), &list)
	if len(list.Reviews) != 3 {
		t.Fatalf("%d verdicts stored, want 3 (the refused ones store nothing): %s", len(list.Reviews), body)
	}
	code, body := api(t, b, "GET", fmt.Sprintf("/api/runs/%d/agreement", id), "", nil)
	var agr struct {
		Reviewed int
		Metrics  []struct {
			Evaluator, Name string
			Reviewed        int
			Exact           float64
			Kappa           *float64
			KappaCI95       [2]float64 `json:"kappa_ci95"`
		}
	}
	json.Unmarshal([]byte(body), &agr)
	if code != 200 || agr.Reviewed != 2 || len(agr.Metrics) != 2 {
		t.Fatalf("agreement: %d %s", code, body)
	}
	for _, m := range agr.Metrics {
		if m.Name == "exact_match" && (m.Reviewed != 1 || m.Exact != 0) {
			t.Errorf("exact_match agreement %+v: the one verdict overrides", m)
		}
	}
}

// A note alone keeps the verdict it goes with and is never one; a verdict
// withdrawn is gone, and the run's reviews never stand at a version they
// stood at before (a report kept of it would be shown again).
func TestANoteKeepsItsVerdictAndAVerdictCanBeWithdrawn(t *testing.T) {
	b, db := newServer(t, web.Config{})
	id, _ := handRunIn(t, db, store.RunCompleted)
	rubric := scoreOf(t, db, id, "rubric", "factual_adherence", 0)
	path := fmt.Sprintf("/api/runs/%d/reviews", id)
	post := func(body map[string]any) (int, string) { return api(t, b, "POST", path, "", body) }
	if code, body := post(map[string]any{"score_id": rubric.ID, "verdict": "note", "note": "hm", "reviewer": "ann"}); code != 422 || !strings.Contains(body, "A note goes with a verdict") {
		t.Errorf("a note with no verdict: %d %s", code, body)
	}
	post(map[string]any{"score_id": rubric.ID, "verdict": "override", "value": 2, "reviewer": "ann"})
	if code, body := post(map[string]any{"score_id": rubric.ID, "verdict": "note", "note": "too kind", "reviewer": "ann"}); code != 201 ||
		!strings.Contains(body, `"verdict":"override"`) || !strings.Contains(body, `"value":2`) || !strings.Contains(body, `"note":"too kind"`) {
		t.Errorf("a note for an override: %d %s", code, body)
	}
	n, last, _ := db.ReviewsVersion(t.Context(), id)
	if code, body := post(map[string]any{"score_id": rubric.ID, "verdict": "withdraw", "reviewer": "ann"}); code != 200 {
		t.Fatalf("withdraw: %d %s", code, body)
	}
	if vs, _ := db.Reviews(t.Context(), id); len(vs) != 0 {
		t.Errorf("%d verdicts after the only one was withdrawn", len(vs))
	}
	if code, _ := post(map[string]any{"score_id": rubric.ID, "verdict": "withdraw", "reviewer": "ann"}); code != 404 {
		t.Errorf("withdrawing nothing: %d", code)
	}
	post(map[string]any{"score_id": rubric.ID, "verdict": "agree", "reviewer": "ben"})
	if n2, last2, _ := db.ReviewsVersion(t.Context(), id); n2 == n && last2 == last {
		t.Errorf("after a withdrawal and a new verdict the reviews stand at their old version (%d, %d)", n, last)
	}
}

func TestReviewLinksAndRoles(t *testing.T) {
	b, db, secrets, _ := tokenServer(t)
	id, _ := handRunIn(t, db, store.RunCompleted)
	other, _ := handRunIn(t, db, store.RunCompleted)
	score := scoreOf(t, db, id, "rubric", "factual_adherence", 0)
	path := fmt.Sprintf("/api/runs/%d/reviews", id)
	agree := map[string]any{"score_id": score.ID, "verdict": "agree"}

	if code, body := api(t, b, "POST", path, secrets[store.RoleReviewer], agree); code != 201 || !strings.Contains(body, `"reviewer":"bob"`) {
		t.Errorf("a reviewer's verdict: %d %s", code, body)
	}
	if code, _ := api(t, b, "POST", path, secrets[store.RoleViewer], agree); code != 403 {
		t.Errorf("a viewer's verdict: %d, want 403", code)
	}
	// Review links are an owner's to make.
	if code, _ := api(t, b, "POST", fmt.Sprintf("/api/runs/%d/review-links", id), secrets[store.RoleReviewer], map[string]string{"name": "x"}); code != 403 {
		t.Errorf("a reviewer made a review link: %d", code)
	}
	code, body := api(t, b, "POST", fmt.Sprintf("/api/runs/%d/review-links", id), secrets[store.RoleOwner], map[string]string{"name": "Dr. Lee"})
	var link struct{ Token, URL string }
	json.Unmarshal([]byte(body), &link)
	if code != 201 || len(link.Token) < 43 || !strings.HasSuffix(link.URL, "/rv/"+link.Token) {
		t.Fatalf("review link: %d %s", code, body)
	}
	if code, body := api(t, b, "POST", path, link.Token, agree); code != 201 || !strings.Contains(body, `"reviewer":"Dr. Lee"`) {
		t.Errorf("a verdict through the link: %d %s", code, body)
	}
	// The link reviews its own run only, and nothing else.
	if code, _ := api(t, b, "POST", fmt.Sprintf("/api/runs/%d/reviews", other), link.Token, agree); code != 401 {
		t.Errorf("the link on another run: %d, want 401", code)
	}
	if code, _ := api(t, b, "GET", fmt.Sprintf("/api/runs/%d", id), link.Token, nil); code != 401 {
		t.Errorf("the link reading the run's summary: %d, want 401", code)
	}
	share, _ := db.CreateShare(t.Context(), id)
	if code, _ := api(t, b, "POST", path, share.Token, agree); code != 401 {
		t.Errorf("a share link's token: %d, want 401", code)
	}
	if code, _ := api(t, b, "DELETE", fmt.Sprintf("/api/runs/%d/review-links/%s", id, link.Token), secrets[store.RoleOwner], nil); code != 204 {
		t.Errorf("revoke: %d", code)
	}
	if code, _ := api(t, b, "POST", path, link.Token, agree); code != 401 {
		t.Errorf("a revoked link: %d, want 401", code)
	}
	vs, _ := db.Reviews(t.Context(), id)
	links, _ := db.ReviewLinks(t.Context(), id)
	if len(vs) != 2 || len(links) != 1 || links[0].Verdicts != 1 || links[0].CreatedBy != "alice" {
		t.Errorf("verdicts %d, links %+v", len(vs), links)
	}
}
