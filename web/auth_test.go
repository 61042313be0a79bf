package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"assay/store"
	"assay/web"
)

func TestTokenRequiredOffLoopback(t *testing.T) {
	if _, err := web.New(&store.DB{}, web.Config{Addr: "0.0.0.0:8080"}); err == nil || !strings.Contains(err.Error(), "--token") {
		t.Fatalf("want an error asking for --token, got %v", err)
	}
	for _, addr := range []string{"127.0.0.1:8080", "localhost:8080", "[::1]:8080"} {
		if _, err := web.New(&store.DB{}, web.Config{Addr: addr}); err != nil {
			t.Errorf("%s: %v", addr, err)
		}
	}
}

func TestTokenGuardsPagesAndAPI(t *testing.T) {
	b, _ := newServer(t, web.Config{Addr: "0.0.0.0:8080", Token: "s3cret"})
	resp, doc := b.get("/datasets")
	if resp.Request.URL.Path != "/login" || doc.Find("#token").Length() != 1 {
		t.Fatalf("a page without the token should lead to the login form, got %s", resp.Request.URL)
	}

	req, _ := http.NewRequest("GET", b.srv.URL+"/api/datasets", nil)
	resp, _ = http.DefaultClient.Do(req)
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("API without token: %d, want 401", resp.StatusCode)
	}
	req.Header.Set("Authorization", "Bearer s3cret")
	resp, _ = http.DefaultClient.Do(req)
	if resp.StatusCode != http.StatusOK {
		t.Errorf("API with bearer token: %d, want 200", resp.StatusCode)
	}
	resp, _ = http.Get(b.srv.URL + "/static/app.css")
	if resp.StatusCode != http.StatusOK {
		t.Errorf("static assets need no token: %d", resp.StatusCode)
	}

	_, doc = b.postForm("/login", url.Values{"token": {"wrong"}, "next": {"/conditions"}})
	if !strings.Contains(text(doc, ".flash"), "not right") {
		t.Errorf("wrong token: %q", text(doc, ".flash"))
	}
	resp, doc = b.postForm("/login", url.Values{"token": {"s3cret"}, "next": {"/conditions"}})
	if resp.Request.URL.Path != "/conditions" || text(doc, "h1") != "Conditions" {
		t.Fatalf("after login: %s %q", resp.Request.URL, text(doc, "h1"))
	}
	b.postForm("/logout", url.Values{})
	resp, _ = b.get("/conditions")
	if resp.Request.URL.Path != "/login" {
		t.Errorf("after logout a page should need the token again, got %s", resp.Request.URL)
	}
}

func TestLoginRedirectStaysOnSite(t *testing.T) {
	b, _ := newServer(t, web.Config{Token: "t"})
	b.get("/login")
	resp, _ := b.postForm("/login", url.Values{"token": {"t"}, "next": {"//evil.example/"}})
	if resp.Request.URL.Host != strings.TrimPrefix(b.srv.URL, "http://") {
		t.Fatalf("login redirected off site to %s", resp.Request.URL)
	}
}
