package web_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"assay/store"
	"assay/web"
)

// The sign-in page and a revoked share link's 404 show no navigation and
// no Sign out: their reader is not signed in, or should not learn the server's pages.
func TestPagesForStrangersShowNoNavigation(t *testing.T) {
	b, db, secrets, _ := tokenServer(t)
	_, doc := b.get("/login")
	if doc.Find("header nav").Length() != 0 || doc.Find(`form[action="/logout"]`).Length() != 0 {
		t.Error("the sign-in page shows the navigation or Sign out")
	}
	id, _ := handRunIn(t, db, store.RunCompleted)
	share, _ := db.CreateShare(context.Background(), id)
	db.RevokeShare(context.Background(), id, share.Token)
	// Even to a signed-in owner, a dead share link is a bare 404.
	b.postForm("/login", url.Values{"token": {secrets[store.RoleOwner]}})
	resp, doc := b.get("/r/" + share.Token)
	if resp.StatusCode != http.StatusNotFound || doc.Find("header nav").Length() != 0 {
		t.Errorf("a revoked share link: %d, navigation %d", resp.StatusCode, doc.Find("header nav").Length())
	}
}

// After a refused price the address bar holds /settings/prices: loading it
// leads back to the settings, not to 405.
func TestSettingsFormAddressesLeadBack(t *testing.T) {
	b, _ := newServer(t, web.Config{})
	for _, path := range []string{"/settings/prices", "/settings/tokens"} {
		resp, _ := b.get(path)
		if resp.StatusCode != http.StatusOK || resp.Request.URL.Path != "/settings" {
			t.Errorf("GET %s: %d at %s", path, resp.StatusCode, resp.Request.URL.Path)
		}
	}
}
