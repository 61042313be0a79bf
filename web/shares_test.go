package web_test

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"assay/store"
	"assay/web"
)

// stranger fetches a path with no cookie and no token, as someone sent a link would.
func stranger(t *testing.T, b *browser, path string) (int, string) {
	t.Helper()
	resp, err := http.Get(b.srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// A review link made on the run's page is shown under Review links, where
// the page lands, with its Copy button.
func TestANewReviewLinkIsShownWhereThePageLands(t *testing.T) {
	b, db := newServer(t, web.Config{Token: testToken})
	id, _ := handRunIn(t, db, store.RunCompleted)
	b.get("/login")
	b.postForm("/login", url.Values{"token": {testToken}, "next": {fmt.Sprintf("/runs/%d", id)}})
	_, doc := b.postForm(fmt.Sprintf("/runs/%d/review-links", id), url.Values{"name": {"Dr Lee"}})
	box := doc.Find("#reviewing ~ .flash")
	if link, _ := box.Find("#new-link input").Attr("value"); !strings.Contains(link, "/rv/") || box.Find("button.copy").Length() != 1 {
		t.Errorf("no new review link with its Copy button under Review links: %q", text(doc, "#reviewing ~ .flash"))
	}
	if doc.Find("#new-link").Length() != 1 {
		t.Error("the new review link is shown twice: at the top of the page too")
	}
}

func TestShareLinkIsReadOnlyAndRevocable(t *testing.T) {
	b, db := newServer(t, web.Config{Token: testToken})
	id, samples := handRunIn(t, db, store.RunCompleted)
	b.get("/login")
	b.postForm("/login", url.Values{"token": {testToken}, "next": {fmt.Sprintf("/runs/%d", id)}})

	resp, doc := b.postForm(fmt.Sprintf("/runs/%d/shares", id), url.Values{})
	if resp.Request.URL.Path != fmt.Sprintf("/runs/%d", id) || !strings.Contains(text(doc, ".flash"), "Share link created") {
		t.Fatalf("share: ended at %s with %q", resp.Request.URL, text(doc, ".flash"))
	}
	link, _ := doc.Find("#new-link input").Attr("value")
	// Where the page lands (#sharing), not at its top.
	if doc.Find("#sharing ~ .flash #new-link").Length() != 1 || doc.Find("#new-link").Length() != 1 {
		t.Error("the new share link is not shown (once) under Share links, where the page lands")
	}
	path := strings.TrimPrefix(link, b.srv.URL)
	if !strings.HasPrefix(path, "/r/") || len(path) < len("/r/")+43 {
		t.Fatalf("share link %q should be /r/ and a 256-bit token", link)
	}

	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if resp, err := noFollow.Get(b.srv.URL + fmt.Sprintf("/runs/%d", id)); err != nil || resp.StatusCode != http.StatusSeeOther {
		t.Errorf("the owner's page without the token should lead to the login: %v %v", err, resp.Status)
	}
	code, body := stranger(t, b, path+"?a=with-docs&b=baseline")
	if code != http.StatusOK || !strings.Contains(body, `id="summary"`) {
		t.Fatalf("share link without the token: %d", code)
	}
	for _, secret := range []string{agentKeyEnv, judgeKeyEnv, urlSecret, "llm.example", "<form", "_csrf", "/settings", "/datasets/"} {
		if strings.Contains(body, secret) {
			t.Errorf("the shared page shows %q", secret)
		}
	}
	assertLinksStayIn(t, body, path)
	if !strings.Contains(body, path+"/samples/"+fmt.Sprint(samples[0])) {
		t.Error("the shared page should link its samples under the share link")
	}
	if !strings.Contains(body, `<option value="with-docs" selected>`) {
		t.Error("the shared page should follow ?a= and ?b=")
	}
	for _, sub := range []string{"/report", "/export.html"} {
		if code, _ := stranger(t, b, path+sub); code != http.StatusOK {
			t.Errorf("%s through the link: %d", sub, code)
		}
	}

	token := strings.TrimPrefix(path, "/r/")
	b.get(fmt.Sprintf("/runs/%d", id))
	resp, doc = b.postForm(fmt.Sprintf("/runs/%d/shares/%s/revoke", id, token), url.Values{})
	if !strings.Contains(text(doc, ".flash"), "revoked") || doc.Find("#shares tr.revoked").Length() != 1 {
		t.Errorf("revoke: %q, %d revoked rows", text(doc, ".flash"), doc.Find("#shares tr.revoked").Length())
	}
	for _, sub := range []string{"", "/report", "/export.html", "/samples"} {
		if code, _ := stranger(t, b, path+sub); code != http.StatusNotFound {
			t.Errorf("%s after revoke: %d, want 404", path+sub, code)
		}
	}
	if code, _ := stranger(t, b, "/r/not-a-token"); code != http.StatusNotFound {
		t.Errorf("an unknown token: %d, want 404", code)
	}
}

// assertLinksStayIn checks that every link of a shared page stays under its
// share link (or on the page, or in the embedded assets).
func assertLinksStayIn(t *testing.T, body, base string) {
	t.Helper()
	for _, part := range strings.Split(body, `href="`)[1:] {
		href := part[:strings.IndexByte(part, '"')]
		if !strings.HasPrefix(href, base) && !strings.HasPrefix(href, "#") && !strings.HasPrefix(href, "/static/") {
			t.Errorf("the shared page links to %q", href)
		}
	}
}

func TestShareNeedsTheFormToken(t *testing.T) {
	b, db := newServer(t, web.Config{})
	id, _ := handRunIn(t, db, store.RunCompleted)
	resp, err := http.PostForm(b.srv.URL+fmt.Sprintf("/runs/%d/shares", id), url.Values{})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("a share without the CSRF token: %d, want 403", resp.StatusCode)
	}
	if shares, _ := db.Shares(t.Context(), id); len(shares) != 0 {
		t.Errorf("%d links made without the form token", len(shares))
	}
}
