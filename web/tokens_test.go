package web_test

import (
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"assay"
	"assay/store"
	"assay/web"
)

// tokenServer is a server whose database holds an owner, a reviewer and a
// viewer token, and no --token of its own.
func tokenServer(t *testing.T) (*browser, *store.DB, map[store.Role]string, *web.Server) {
	t.Helper()
	db := openDB(t)
	secrets := map[store.Role]string{}
	for _, tok := range []struct {
		name string
		role store.Role
	}{{"alice", store.RoleOwner}, {"bob", store.RoleReviewer}, {"carol", store.RoleViewer}} { // the first is an owner's
		name, role := tok.name, tok.role
		secret, _, err := db.CreateToken(t.Context(), name, role)
		if err != nil {
			t.Fatal(err)
		}
		secrets[role] = secret
	}
	s, err := web.New(db, web.Config{Addr: "0.0.0.0:8080"}) // tokens in the database allow any address
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, srv: srv, http: &http.Client{Jar: jar}}, db, secrets, s
}

func bearer(t *testing.T, b *browser, method, path, secret string, form url.Values) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(method, b.srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if secret != "" {
		req.Header.Set("Authorization", "Bearer "+secret)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// TestEveryWriteRouteChecksTheRole sends every unsafe route of the server
// as a viewer and as a reviewer: each is refused (403) before its handler
// runs, but for signing in and out; an owner passes the role check.
func TestEveryWriteRouteChecksTheRole(t *testing.T) {
	b, _, secrets, s := tokenServer(t)
	checked := 0
	for _, route := range s.Routes() {
		method, path, _ := strings.Cut(route, " ")
		// A review link's routes are authorised by the link, not by a role.
		if method == http.MethodGet || method == http.MethodHead || method == "echo_route_not_found" || path == "/login" || path == "/logout" ||
			strings.HasPrefix(path, "/rv/") {
			continue
		}
		reviewing := path == "/runs/:id/reviews" || path == "/api/runs/:id/reviews" // a reviewer's too
		path = strings.NewReplacer(":id", "1", ":token", "tok", ":sample", "1").Replace(path)
		for _, role := range []store.Role{store.RoleViewer, store.RoleReviewer} {
			resp := bearer(t, b, method, path, secrets[role], url.Values{})
			if forbidden := resp.StatusCode == http.StatusForbidden; forbidden != (role == store.RoleViewer || !reviewing) {
				t.Errorf("%s %s as a %s: %d", method, path, role, resp.StatusCode)
			}
		}
		if resp := bearer(t, b, method, path, secrets[store.RoleOwner], url.Values{}); resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusUnauthorized {
			t.Errorf("%s %s as the owner: %d", method, path, resp.StatusCode)
		}
		checked++
	}
	if checked < 20 {
		t.Errorf("only %d write routes checked", checked)
	}
	// Reading is for everyone signed in, and no one else.
	for role, secret := range secrets {
		if resp := bearer(t, b, "GET", "/api/datasets", secret, nil); resp.StatusCode != http.StatusOK {
			t.Errorf("GET /api/datasets as %s: %d", role, resp.StatusCode)
		}
	}
	if resp := bearer(t, b, "GET", "/api/datasets", "", nil); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET /api/datasets with no token: %d, want 401", resp.StatusCode)
	}
	if resp := bearer(t, b, "GET", "/api/datasets", "asy_not-a-token", nil); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET /api/datasets with a made-up token: %d, want 401", resp.StatusCode)
	}
}

func TestSignInShowsTheNameAndRecordsIt(t *testing.T) {
	b, db, secrets, _ := tokenServer(t)
	b.get("/login")
	resp, doc := b.postForm("/login", url.Values{"token": {secrets[store.RoleOwner]}, "next": {"/conditions"}})
	if resp.Request.URL.Path != "/conditions" || text(doc, "#signed-in") != "alice owner" {
		t.Fatalf("after sign-in: %s, header %q", resp.Request.URL, text(doc, "#signed-in"))
	}
	b.get("/conditions/new")
	b.postForm("/conditions", url.Values{"name": {"by-alice"}, "system_prompt": {"x"}})
	id, _ := handRunIn(t, db, store.RunCompleted)
	b.get(fmt.Sprintf("/runs/%d", id))
	b.postForm(fmt.Sprintf("/runs/%d/shares", id), url.Values{})
	shares, _ := db.Shares(t.Context(), id)
	if len(shares) != 1 || shares[0].CreatedBy != "alice" {
		t.Errorf("share link made by %+v, want alice", shares)
	}
	if conds, _ := db.Conditions(t.Context()); len(conds) != 1 || conds[0].CreatedBy != "alice" {
		t.Errorf("conditions %+v, want one made by alice", conds)
	}
}

func TestSessionsEnd(t *testing.T) {
	b, db, secrets, _ := tokenServer(t)
	signIn := func(secret string) string {
		jar, _ := cookiejar.New(nil)
		b.http.Jar = jar
		b.get("/login")
		b.postForm("/login", url.Values{"token": {secret}, "next": {"/runs"}})
		for _, c := range jar.Cookies(mustURL(b.srv.URL)) {
			if c.Name == "assay_session" {
				if len(c.Value) < 43 {
					t.Errorf("session id %q is not 256 random bits", c.Value)
				}
				return c.Value
			}
		}
		t.Fatal("no session cookie")
		return ""
	}
	signedIn := func() bool {
		resp, _ := b.get("/runs")
		return resp.Request.URL.Path == "/runs"
	}

	// Logging out ends the session on the server: its cookie, replayed, leads to the login.
	id := signIn(secrets[store.RoleViewer])
	if !signedIn() {
		t.Fatal("not signed in")
	}
	b.postForm("/logout", url.Values{})
	b.http.Jar.SetCookies(mustURL(b.srv.URL), []*http.Cookie{{Name: "assay_session", Value: id, Path: "/"}})
	if signedIn() {
		t.Error("a logged-out session's cookie still works")
	}

	// Revoking the token ends its sessions at once.
	signIn(secrets[store.RoleViewer])
	if err := db.RevokeToken(t.Context(), "carol"); err != nil {
		t.Fatal(err)
	}
	if signedIn() {
		t.Error("a revoked token's session still works")
	}
	if resp := bearer(t, b, "GET", "/api/runs", secrets[store.RoleViewer], nil); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a revoked token as Bearer: %d", resp.StatusCode)
	}

	// Idle for more than 14 days, or signed in more than 90 days ago: ended.
	start := time.Now().UTC()
	now := start
	db.SetClock(func() time.Time { return now })
	signIn(secrets[store.RoleReviewer])
	now = start.Add(13 * 24 * time.Hour)
	if !signedIn() {
		t.Error("a session used 13 days after sign-in has ended")
	}
	now = start.Add(26 * 24 * time.Hour)
	if !signedIn() {
		t.Error("a session used every 13 days has ended")
	}
	now = now.Add(15 * 24 * time.Hour)
	if signedIn() {
		t.Error("a session idle for 15 days is still alive")
	}
	signIn(secrets[store.RoleReviewer])
	for day := 10; day <= 100; day += 10 {
		now = now.Add(10 * 24 * time.Hour)
		if alive := signedIn(); alive != (day <= 90) {
			t.Errorf("day %d after sign-in: signed in %v", day, alive)
		}
	}
}

func TestLoginIsRateLimited(t *testing.T) {
	b, _, secrets, _ := tokenServer(t)
	b.get("/login")
	for i := 1; i <= 10; i++ {
		// A forged X-Forwarded-For does not make each guess a new client.
		form := url.Values{"token": {fmt.Sprintf("guess-%d", i)}, "_csrf": {b.csrf}}
		req, _ := http.NewRequest("POST", b.srv.URL+"/login", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-Forwarded-For", fmt.Sprintf("10.0.0.%d", i))
		resp, err := b.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("attempt %d: %d, want 401", i, resp.StatusCode)
		}
	}
	resp, doc := b.postForm("/login", url.Values{"token": {"guess-11"}})
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" || !strings.Contains(text(doc, ".flash"), "Too many attempts") {
		t.Errorf("an 11th wrong token: %d, Retry-After %q, %q; want 429", resp.StatusCode, resp.Header.Get("Retry-After"), text(doc, ".flash"))
	}
	// Only failures are limited: whoever holds the right token still signs in.
	b.postForm("/login", url.Values{"token": {secrets[store.RoleOwner]}})
	if resp, _ := b.get("/settings"); resp.StatusCode != http.StatusOK || resp.Request.URL.Path != "/settings" {
		t.Errorf("after 11 failures from its address, the right token did not sign in: %d at %s", resp.StatusCode, resp.Request.URL.Path)
	}
}

func TestShortTokenIsRefused(t *testing.T) {
	_, err := web.New(openDB(t), web.Config{Token: "abc"})
	if err == nil || !strings.Contains(err.Error(), "at least 16") || !strings.Contains(err.Error(), "assay token create") {
		t.Errorf("a 3-character token: %v", err)
	}
}

func TestOwnersManageTokensOnSettings(t *testing.T) {
	b, _, secrets, _ := tokenServer(t)
	b.get("/login")
	b.postForm("/login", url.Values{"token": {secrets[store.RoleOwner]}})
	_, doc := b.get("/settings")
	if doc.Find("#token-form").Length() != 1 || doc.Find("#token-list tbody tr").Length() != 3 {
		t.Fatalf("owner's settings: form %d, %d tokens listed", doc.Find("#token-form").Length(), doc.Find("#token-list tbody tr").Length())
	}
	resp, doc := b.postForm("/settings/tokens", url.Values{"name": {"dave"}, "role": {"reviewer"}})
	secret := text(doc, "#new-token-secret")
	if resp.StatusCode != http.StatusCreated || !strings.HasPrefix(secret, "asy_") || resp.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("create: %d, secret %q", resp.StatusCode, secret)
	}
	if resp := bearer(t, b, "GET", "/api/runs", secret, nil); resp.StatusCode != http.StatusOK {
		t.Errorf("the new token: %d", resp.StatusCode)
	}
	if _, doc := b.get("/settings"); strings.Contains(doc.Text(), secret) {
		t.Error("the secret is shown again")
	}
	if _, doc := b.postForm("/settings/tokens", url.Values{"name": {"dave"}, "role": {"viewer"}}); !strings.Contains(text(doc, "#token-error"), "dave already has a token") {
		t.Errorf("a second token for dave: %q", text(doc, "#token-error"))
	}
	b.postForm("/settings/tokens/revoke", url.Values{"name": {"dave"}})
	if resp := bearer(t, b, "GET", "/api/runs", secret, nil); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the revoked token: %d", resp.StatusCode)
	}

	viewer := &browser{t: t, srv: b.srv, http: &http.Client{Jar: newJar()}}
	viewer.get("/login")
	viewer.postForm("/login", url.Values{"token": {secrets[store.RoleViewer]}})
	if _, doc := viewer.get("/settings"); doc.Find("#token-form").Length() != 0 || doc.Find("#token-list").Length() != 0 {
		t.Error("a viewer sees the tokens")
	}
}

func newJar() http.CookieJar {
	jar, _ := cookiejar.New(nil)
	return jar
}

func mustURL(s string) *url.URL {
	u, _ := url.Parse(s)
	return u
}

// On a server that asks no token yet, the first token made in Settings is an
// owner's whatever the form sends — so that whoever made it can still
// manage the others once every visitor must sign in — and says the server
// now asks for tokens (not that it asks for none); later ones default to viewer.
func TestTheFirstTokenIsAnOwners(t *testing.T) {
	b, _ := newServer(t, web.Config{})
	_, doc := b.get("/settings")
	if doc.Find("select#token_role").Length() != 0 || !strings.Contains(text(doc, "#token_role"), "first token is always an owner's") {
		t.Fatalf("the first token's role should be fixed and said: %q", text(doc, "#token-form"))
	}
	if !strings.Contains(text(doc, "#tokens + p"), "asks for no token yet") {
		t.Errorf("an open server should say it asks for no token: %q", text(doc, "#tokens + p"))
	}
	resp, doc := b.postForm("/settings/tokens", url.Values{"name": {"erin"}, "role": {"owner"}})
	if resp.StatusCode != http.StatusCreated || !strings.Contains(text(doc, "#new-token"), "(owner)") ||
		!strings.Contains(text(doc, "#new-token"), "now asks every visitor") || strings.Contains(doc.Text(), "asks for no token yet") {
		t.Fatalf("the first token: %d %q", resp.StatusCode, text(doc, "#new-token"))
	}
	b.get("/login")
	b.postForm("/login", url.Values{"token": {text(doc, "#new-token-secret")}})
	if _, doc = b.postForm("/settings/tokens", url.Values{"name": {"frank"}, "role": {"reviewer"}}); !strings.Contains(text(doc, "#new-token"), "(reviewer)") {
		t.Errorf("the second token keeps the role asked: %q", text(doc, "#new-token"))
	}
	if sel, _ := doc.Find("select#token_role option[selected]").Attr("value"); sel != "viewer" {
		t.Errorf("later tokens default to %q, want viewer", sel)
	}
}

// Guessing is limited wherever a secret is taken, not only at sign-in: after
// ten wrong Bearer tokens, share links or review links from one address,
// each further wrong one on any of these paths is answered 429 with
// Retry-After. The failures are limited, not the people who hold a key: a
// page elsewhere can make a browser guess from the address of everyone on
// loopback (an <img> for /r/guess1 … /r/guess10), and the right token, the
// right link and a session still get in.
func TestGuessesAreLimitedOnEveryPath(t *testing.T) {
	for _, guess := range []func(i int) string{
		func(i int) string { return "Bearer asy_guess" + fmt.Sprint(i) },
		func(i int) string { return fmt.Sprintf("/r/guess-%d", i) },
		func(i int) string { return fmt.Sprintf("/rv/guess-%d/samples", i) },
	} {
		b, db, secrets, _ := tokenServer(t)
		b.get("/login")
		b.postForm("/login", url.Values{"token": {secrets[store.RoleViewer]}})
		id, _ := handRunIn(t, db, store.RunCompleted)
		share, err := db.CreateShare(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		get := func(path, bearerToken string) *http.Response {
			req, _ := http.NewRequest("GET", b.srv.URL+path, nil)
			if bearerToken != "" {
				req.Header.Set("Authorization", "Bearer "+bearerToken)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp
		}
		for i := 1; i <= 10; i++ {
			var resp *http.Response
			if g := guess(i); strings.HasPrefix(g, "Bearer ") {
				resp = get("/api/runs", strings.TrimPrefix(g, "Bearer "))
			} else {
				resp = get(g, "")
			}
			if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusNotFound {
				t.Fatalf("%s: guess %d answered %d", guess(i), i, resp.StatusCode)
			}
		}
		for _, wrong := range []*http.Response{get("/api/runs", "asy_guess11"), get("/r/guess-11", ""), get("/rv/guess-11/samples", "")} {
			if wrong.StatusCode != http.StatusTooManyRequests || wrong.Header.Get("Retry-After") == "" {
				t.Errorf("after ten guesses like %s, another wrong secret at %s: %d, want 429 with Retry-After", guess(1), wrong.Request.URL.Path, wrong.StatusCode)
			}
		}
		for _, right := range []*http.Response{get("/api/runs", secrets[store.RoleOwner]), get("/r/"+share.Token, "")} {
			if right.StatusCode != http.StatusOK {
				t.Errorf("after eleven guesses like %s, the right secret at %s: %d, want 200", guess(1), right.Request.URL.Path, right.StatusCode)
			}
		}
		if resp, _ := b.get("/runs"); resp.StatusCode != http.StatusOK || resp.Request.URL.Path != "/runs" {
			t.Errorf("after guesses like %s, a signed-in session: %d at %s", guess(1), resp.StatusCode, resp.Request.URL.Path)
		}
	}
}

// Each person sees the controls their role allows: a reviewer or a viewer
// meets no Launch button, no upload, no price form, no Share and no review
// link form that would answer Forbidden and lose what was typed; an owner
// sees them all. A refusal names the role needed.
func TestPagesShowTheControlsOfTheRole(t *testing.T) {
	b, db, secrets, _ := tokenServer(t)
	id, _ := handRunIn(t, db, store.RunCompleted)
	c := &assay.Condition{Name: "baseline", SystemPrompt: "Answer.", MCPServers: []assay.MCPServer{}}
	if err := db.CreateCondition(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	controls := map[string]string{
		"/runs":                                  "#new-run",
		"/runs/new":                              "#launch",
		fmt.Sprintf("/runs/%d", id):              "#share, #review-link-form",
		"/datasets":                              "#upload",
		"/conditions":                            "#new-condition",
		fmt.Sprintf("/conditions/%d/edit", c.ID): "#condition-form button[type=submit]",
		"/settings":                              "#price-form",
	}
	for _, role := range []store.Role{store.RoleOwner, store.RoleReviewer, store.RoleViewer} {
		who := &browser{t: t, srv: b.srv, http: &http.Client{Jar: newJar()}}
		who.get("/login")
		who.postForm("/login", url.Values{"token": {secrets[role]}})
		for path, sel := range controls {
			resp, doc := who.get(path)
			if resp.StatusCode != http.StatusOK {
				t.Errorf("%s reads %s: %d", role, path, resp.StatusCode)
			}
			if n := doc.Find(sel).Length(); (n > 0) != (role == store.RoleOwner) {
				t.Errorf("%s on %s: %d of %s", role, path, n, sel)
			}
		}
		if _, doc := who.get("/runs/new"); role != store.RoleOwner && !strings.Contains(text(doc, "#needs-owner"), "Launching a run needs an owner") {
			t.Errorf("%s on the run form: %q", role, text(doc, "#needs-owner"))
		}
	}
	score := scoreOf(t, db, id, "rubric", "factual_adherence", 0)
	code, body := api(t, b, "POST", fmt.Sprintf("/api/runs/%d/reviews", id), secrets[store.RoleViewer], map[string]any{"score_id": score.ID, "verdict": "agree"})
	if code != http.StatusForbidden || !strings.Contains(body, "needs a reviewer or an owner") {
		t.Errorf("a viewer's verdict: %d %s", code, body)
	}
	code, body = api(t, b, "POST", "/api/conditions", secrets[store.RoleReviewer], map[string]any{"name": "x"})
	if code != http.StatusForbidden || !strings.Contains(body, "needs an owner") {
		t.Errorf("a reviewer's condition: %d %s", code, body)
	}
}

// A sign-in address opened by a browser signed in already — which a page
// elsewhere can make it do — does not replace its session: the page asks,
// and only the form it shows signs in anew.
func TestASignInAddressNeverReplacesASessionUnasked(t *testing.T) {
	b, _, secrets, _ := tokenServer(t)
	b.get("/login")
	b.postForm("/login", url.Values{"token": {secrets[store.RoleViewer]}})
	resp, doc := b.get("/login?token=" + url.QueryEscape(secrets[store.RoleOwner]) + "&next=/settings")
	if resp.StatusCode != http.StatusOK || doc.Find("#login-switch").Length() != 1 || !strings.Contains(text(doc, "#login-switch"), "signed in as carol") {
		t.Fatalf("a sign-in address opened while signed in: %d, %q", resp.StatusCode, text(doc, "#login-switch"))
	}
	if _, doc := b.get("/settings"); doc.Find("#token-form").Length() != 0 {
		t.Fatal("the address replaced the viewer's session unasked")
	}
	b.get("/login?token=" + url.QueryEscape(secrets[store.RoleOwner]) + "&next=/settings")
	resp, doc = b.postForm("/login", url.Values{"token": {secrets[store.RoleOwner]}, "next": {"/settings"}})
	if resp.Request.URL.Path != "/settings" || doc.Find("#token-form").Length() != 1 {
		t.Errorf("the form the page shows did not sign in as the owner: at %s", resp.Request.URL.Path)
	}
}
