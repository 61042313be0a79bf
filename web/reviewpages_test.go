package web_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"assay/store"
	"assay/web"
)

func TestReviewOnTheSamplePage(t *testing.T) {
	b, db := newServer(t, web.Config{})
	id, samples := handRunIn(t, db, store.RunCompleted)
	page := fmt.Sprintf("/runs/%d/samples/%d", id, samples[1])
	_, doc := b.get(page)
	forms := doc.Find("form.review-form")
	// The name is asked once at the top; each form asks it only without script.
	if forms.Length() == 0 || doc.Find("#reviewer-name").Length() != 1 || doc.Find("form.review-form noscript").Length() != forms.Length() {
		t.Fatalf("%d review forms, %d names asked at the top, %d in forms without script: an open server asks the reviewer's name once",
			forms.Length(), doc.Find("#reviewer-name").Length(), doc.Find("form.review-form noscript").Length())
	}
	scoreID, _ := forms.First().Find("input[name=score_id]").Attr("value")
	back, _ := forms.First().Find("input[name=back]").Attr("value")

	// Without script: the form posts, and the page comes back with the verdict.
	resp, doc := b.postForm(fmt.Sprintf("/runs/%d/reviews", id), url.Values{"score_id": {scoreID}, "verdict": {"override"},
		"value": {"1"}, "note": {"<script>alert(1)</script> too generous"}, "reviewer": {"Ann"}, "back": {back}})
	row := doc.Find("#score-" + scoreID)
	if resp.Request.URL.Path != page || !strings.Contains(row.Find(".verdict").Text(), "→ 1") || !strings.Contains(row.Text(), "Ann") {
		t.Fatalf("after the verdict: at %s, row %q", resp.Request.URL, row.Text())
	}
	if html, _ := row.Html(); strings.Contains(html, "<script>") || !strings.Contains(row.Find(".note").Text(), "<script>alert(1)</script>") {
		t.Errorf("the note is not shown as text: %s", html)
	}
	if doc.Find("#reviewer-name, form.review-form noscript").Length() != 0 {
		t.Error("the name is asked again: the browser keeps it")
	}
	// A value off the scale is refused beside its score, and stores nothing.
	resp, doc = b.postForm(fmt.Sprintf("/runs/%d/reviews", id), url.Values{"score_id": {scoreID}, "verdict": {"override"}, "value": {"9"}, "back": {back}})
	if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(doc.Find("#score-"+scoreID+" .review-error").Text(), "9 is outside it") {
		t.Errorf("off the scale: %d %q", resp.StatusCode, doc.Find("#score-"+scoreID).Text())
	}
	if vs, _ := db.Reviews(t.Context(), id); len(vs) != 1 || vs[0].Value != 1 || vs[0].Reviewer != "Ann" {
		t.Errorf("verdicts %+v", vs)
	}
	// The queue leads to a sample Ann has not reviewed.
	b.http.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, _ = b.get(fmt.Sprintf("/runs/%d/review/next?order=lowest", id))
	if loc := resp.Header.Get("Location"); !strings.Contains(loc, fmt.Sprintf("/runs/%d/samples/", id)) || !strings.Contains(loc, "queue=lowest") {
		t.Errorf("queue: %d to %q", resp.StatusCode, loc)
	}
	b.http.CheckRedirect = nil

	// A share link shows no review controls, nor the reviewers.
	share, _ := db.CreateShare(t.Context(), id)
	_, doc = b.get(fmt.Sprintf("/r/%s/samples/%d", share.Token, samples[1]))
	if doc.Find("form.review-form").Length() != 0 || doc.Find(".verdict").Length() != 0 {
		t.Error("a share link shows review controls or verdicts")
	}
	if resp, _ := b.postForm(fmt.Sprintf("/r/%s/reviews", share.Token), url.Values{"score_id": {scoreID}, "verdict": {"agree"}}); resp.StatusCode < 400 {
		t.Errorf("a verdict through a share link: %d", resp.StatusCode)
	}
}

func TestReviewLinkPages(t *testing.T) {
	b, db, secrets, _ := tokenServer(t)
	id, samples := handRunIn(t, db, store.RunCompleted)
	l, _ := db.CreateReviewLink(t.Context(), id, "Dr. Lee")
	expert := &browser{t: t, srv: b.srv, http: &http.Client{Jar: newJar()}}
	resp, doc := expert.get("/rv/" + l.Token)
	if resp.Request.URL.Path != "/rv/"+l.Token+"/samples" || doc.Find("#samples").Length() != 1 {
		t.Fatalf("the link opens at %s", resp.Request.URL)
	}
	if doc.Find("header nav").Length() != 0 || strings.Contains(doc.Text(), "Settings") || doc.Find("a[href*='export']").Length() != 0 {
		t.Error("a review link shows the navigation, settings or exports")
	}
	// The samples table starts the review queue, in the link's own pages.
	if act, _ := doc.Find("#review-queue form").Attr("action"); act != "/rv/"+l.Token+"/review/next" || doc.Find("#queue-order option").Length() != 5 {
		t.Errorf("the link's samples table: queue form to %q with %d orders", act, doc.Find("#queue-order option").Length())
	}
	page := fmt.Sprintf("/rv/%s/samples/%d", l.Token, samples[0])
	_, doc = expert.get(page)
	form := doc.Find("form.review-form").First()
	scoreID, _ := form.Find("input[name=score_id]").Attr("value")
	if doc.Find("input.reviewer-name").Length() != 0 || scoreID == "" {
		t.Fatal("the review link's page has no review form, or asks a name it knows")
	}
	expert.postForm("/rv/"+l.Token+"/reviews", url.Values{"score_id": {scoreID}, "verdict": {"agree"}})
	vs, _ := db.Reviews(t.Context(), id)
	if len(vs) != 1 || vs[0].Reviewer != "Dr. Lee" {
		t.Fatalf("verdicts %+v", vs)
	}
	// The link reaches nothing of the server's: not the run's report, not its API.
	for _, path := range []string{fmt.Sprintf("/runs/%d", id), "/settings", fmt.Sprintf("/rv/%s/../../runs/%d", l.Token, id)} {
		if resp, _ := expert.get(path); resp.Request.URL.Path != "/login" && resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s through the link's browser: at %s", path, resp.Request.URL)
		}
	}
	if code, _ := api(t, b, "DELETE", fmt.Sprintf("/api/runs/%d/review-links/%s", id, l.Token), secrets[store.RoleOwner], nil); code != 204 {
		t.Fatal("revoke failed")
	}
	if resp, _ := expert.get(page); resp.StatusCode != http.StatusNotFound {
		t.Errorf("a revoked link's page: %d, want 404", resp.StatusCode)
	}
	if resp, _ := expert.postForm("/rv/"+l.Token+"/reviews", url.Values{"score_id": {scoreID}, "verdict": {"override"}, "value": {"2"}}); resp.StatusCode != http.StatusNotFound {
		t.Errorf("a verdict through a revoked link: %d", resp.StatusCode)
	}
	// A viewer reads verdicts but gets no controls.
	viewer := &browser{t: t, srv: b.srv, http: &http.Client{Jar: newJar()}}
	viewer.get("/login")
	viewer.postForm("/login", url.Values{"token": {secrets[store.RoleViewer]}})
	_, doc = viewer.get(fmt.Sprintf("/runs/%d/samples/%d", id, samples[0]))
	if doc.Find("form.review-form").Length() != 0 || !strings.Contains(doc.Find(".verdict").Text(), "Dr. Lee") {
		t.Error("a viewer's sample page: controls shown, or verdicts hidden")
	}
	for _, path := range []string{fmt.Sprintf("/runs/%d", id), fmt.Sprintf("/runs/%d/samples", id)} {
		if _, doc := viewer.get(path); doc.Find("#review-queue").Length() != 0 {
			t.Errorf("%s offers a viewer the review queue", path)
		}
	}
	// The owner starts it from the report's review section.
	owner := &browser{t: t, srv: b.srv, http: &http.Client{Jar: newJar()}}
	owner.get("/login")
	owner.postForm("/login", url.Values{"token": {secrets[store.RoleOwner]}})
	if _, doc := owner.get(fmt.Sprintf("/runs/%d", id)); doc.Find("#reviews ~ #review-queue form").Length() != 1 {
		t.Error("the owner's report offers no review queue")
	}
}
