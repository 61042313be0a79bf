package web_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"assay/web"
)

// testToken is a server's own --token in these tests.
const testToken = "test-token-0123456789"

func TestTokenRequiredOffLoopback(t *testing.T) {
	db := openDB(t)
	if _, err := web.New(db, web.Config{Addr: "0.0.0.0:8080"}); err == nil || !strings.Contains(err.Error(), "--token") {
		t.Fatalf("want an error asking for --token, got %v", err)
	}
	for _, addr := range []string{"127.0.0.1:8080", "localhost:8080", "[::1]:8080"} {
		if _, err := web.New(db, web.Config{Addr: addr}); err != nil {
			t.Errorf("%s: %v", addr, err)
		}
	}
}

func TestTokenGuardsPagesAndAPI(t *testing.T) {
	b, _ := newServer(t, web.Config{Addr: "0.0.0.0:8080", Token: "s3cret-s3cret-s3cret"})
	resp, doc := b.get("/datasets")
	if resp.Request.URL.Path != "/login" || doc.Find("#token").Length() != 1 {
		t.Fatalf("a page without the token should lead to the login form, got %s", resp.Request.URL)
	}

	req, _ := http.NewRequest("GET", b.srv.URL+"/api/datasets", nil)
	resp, _ = http.DefaultClient.Do(req)
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("API without token: %d, want 401", resp.StatusCode)
	}
	req.Header.Set("Authorization", "Bearer s3cret-s3cret-s3cret")
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
	resp, doc = b.postForm("/login", url.Values{"token": {"s3cret-s3cret-s3cret"}, "next": {"/conditions"}})
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
	b, _ := newServer(t, web.Config{Token: testToken})
	b.http.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	for _, next := range []string{"//evil.example/", "/\\evil.example", "/\\/evil.example", "/\t/evil.example", "/\n/evil.example",
		"https://evil.example/", "javascript:alert(1)", "/%0a/evil.example\\x"} {
		b.get("/login")
		resp, _ := b.postForm("/login", url.Values{"token": {testToken}, "next": {next}})
		if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || loc != "/" {
			t.Errorf("next=%q: %d to %q, want a redirect to /", next, resp.StatusCode, loc)
		}
	}
	b.get("/login")
	resp, _ := b.postForm("/login", url.Values{"token": {testToken}, "next": {"/runs/3?a=x#paired"}})
	if loc := resp.Header.Get("Location"); loc != "/runs/3?a=x#paired" {
		t.Errorf("a local next became %q", loc)
	}
}

func TestForeignHostIsRefused(t *testing.T) {
	b, db := newServer(t, web.Config{})
	for _, host := range []string{"evil.example", "evil.example:8080", "127.0.0.1.nip.io", "localhost.evil.example"} {
		req, _ := http.NewRequest("GET", b.srv.URL+"/runs/new", nil)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusMisdirectedRequest || !strings.Contains(string(body), "--allowed-hosts") {
			t.Errorf("Host %s: %d, want 421 naming --allowed-hosts", host, resp.StatusCode)
		}
		if strings.Contains(string(body), "_csrf") {
			t.Errorf("Host %s got a form token", host)
		}
	}
	// A rebound name cannot post either, even with a token read earlier.
	b.get("/conditions/new")
	form := url.Values{"_csrf": {b.csrf}, "name": {"rebound"}}
	req, _ := http.NewRequest("POST", b.srv.URL+"/conditions", strings.NewReader(form.Encode()))
	req.Host = "evil.example:80"
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := b.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if list, _ := db.Conditions(t.Context()); resp.StatusCode != http.StatusMisdirectedRequest || len(list) != 0 {
		t.Errorf("a post under a foreign Host: %d, %d conditions", resp.StatusCode, len(list))
	}
	for _, host := range []string{"localhost:9", "127.0.0.1", "[::1]:8080", "LOCALHOST"} {
		req, _ := http.NewRequest("GET", b.srv.URL+"/healthz", nil)
		req.Host = host
		if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusOK {
			t.Errorf("Host %s refused", host)
		}
	}
}

func TestAllowedHostsAndTokenOpenOtherNames(t *testing.T) {
	hosts, err := web.AllowedHosts(" assay.internal, Eval-Box ")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := web.AllowedHosts("http://x.example/"); err == nil {
		t.Error("a URL is not a host name")
	}
	allowed, _ := newServer(t, web.Config{AllowedHosts: hosts})
	withToken, _ := newServer(t, web.Config{Token: testToken})
	for _, tc := range []struct {
		b    *browser
		host string
		want int
	}{{allowed, "assay.internal:8080", 200}, {allowed, "eval-box", 200}, {allowed, "other.example", 421}, {withToken, "any.example", 200}} {
		req, _ := http.NewRequest("GET", tc.b.srv.URL+"/healthz", nil)
		req.Host = tc.host
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != tc.want {
			t.Errorf("Host %s: %v %v, want %d", tc.host, err, resp.StatusCode, tc.want)
		}
	}
}

// post sends a form by hand, with the headers a browser would add.
func post(t *testing.T, b *browser, path string, form url.Values, headers map[string]string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("POST", b.srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := b.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

func TestCrossOriginPostsAreRefused(t *testing.T) {
	b, db := newServer(t, web.Config{})
	b.get("/conditions/new")
	form := url.Values{"_csrf": {b.csrf}, "name": {"forged"}}
	for name, h := range map[string]map[string]string{
		"another site":              {"Sec-Fetch-Site": "cross-site", "Origin": "http://evil.example"},
		"another port of this host": {"Sec-Fetch-Site": "same-site", "Origin": "http://127.0.0.1:1"},
		"an Origin only":            {"Origin": "http://evil.example"},
		"a null Origin":             {"Origin": "null"},
	} {
		if resp := post(t, b, "/conditions", form, h); resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s: %d, want 403", name, resp.StatusCode)
		}
	}
	if list, _ := db.Conditions(t.Context()); len(list) != 0 {
		t.Fatalf("%d conditions made from another origin", len(list))
	}
	if resp := post(t, b, "/conditions", form, map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": b.srv.URL}); resp.StatusCode != http.StatusOK {
		t.Errorf("the page's own form: %d", resp.StatusCode)
	}
	if list, _ := db.Conditions(t.Context()); len(list) != 1 {
		t.Errorf("the page's own form made %d conditions, want 1", len(list))
	}
}

func TestCSRFIsBoundToTheBrowser(t *testing.T) {
	b, db := newServer(t, web.Config{Token: testToken})
	b.get("/login")
	b.postForm("/login", url.Values{"token": {testToken}})
	b.get("/conditions/new")
	form := url.Values{"name": {"forged"}}

	// An Authorization header that is not this server's Bearer token does not excuse a form.
	for _, auth := range []string{"Basic dXNlcjpwYXNz", "Bearer wrong", "Bearer "} {
		if resp := post(t, b, "/conditions", form, map[string]string{"Authorization": auth}); resp.StatusCode != http.StatusForbidden &&
			resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("Authorization %q without _csrf: %d, want 403 (or 401 for a token that is not valid)", auth, resp.StatusCode)
		}
	}
	// A token and browser cookie pair made elsewhere (another browser's) does not pass with this session.
	other, _ := newServer(t, web.Config{Token: testToken})
	other.get("/login")
	form.Set("_csrf", other.csrf)
	if resp := post(t, b, "/conditions", form, nil); resp.StatusCode != http.StatusForbidden {
		t.Errorf("another browser's token: %d, want 403", resp.StatusCode)
	}
	if list, _ := db.Conditions(t.Context()); len(list) != 0 {
		t.Fatalf("%d conditions made without a valid token", len(list))
	}
	// The valid Bearer token is an API client's: no form token needed.
	script := &browser{t: t, srv: b.srv, http: &http.Client{}}
	if resp := post(t, script, "/conditions", url.Values{"name": {"api"}}, map[string]string{"Authorization": "Bearer " + testToken}); resp.StatusCode != http.StatusOK {
		t.Errorf("Bearer t: %d", resp.StatusCode)
	}
	if list, _ := db.Conditions(t.Context()); len(list) != 1 {
		t.Errorf("the API client made %d conditions, want 1", len(list))
	}
}
