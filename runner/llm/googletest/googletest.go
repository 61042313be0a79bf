// Package googletest is a fake Google OAuth token endpoint, and the
// service-account key files that point at it, for tests of calls to
// Vertex AI: golang.org/x/oauth2/google signs a JWT with the file's key and
// trades it at the file's token_uri for an access token, as it would at
// Google's.
package googletest

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TokenServer issues access tokens for signed JWT assertions.
type TokenServer struct {
	URL string // the token_uri to write into a key file

	ts     *httptest.Server
	mu     sync.Mutex
	issued []string
	scopes []string
}

// NewTokenServer starts a token endpoint; it stops when the test ends.
func NewTokenServer(t testing.TB) *TokenServer {
	s := &TokenServer{}
	s.ts = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.ts.URL + "/token"
	t.Cleanup(s.ts.Close)
	return s
}

func (s *TokenServer) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/token" {
		http.NotFound(w, r)
		return
	}
	if err := r.ParseForm(); err != nil || r.PostForm.Get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "unsupported_grant_type"})
		return
	}
	parts := strings.Split(r.PostForm.Get("assertion"), ".")
	var claims struct {
		Scope string `json:"scope"`
		Aud   string `json:"aud"`
	}
	if len(parts) != 3 {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
		return
	}
	if raw, err := base64.RawURLEncoding.DecodeString(parts[1]); err != nil || json.Unmarshal(raw, &claims) != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
		return
	}
	s.mu.Lock()
	token := fmt.Sprintf("ya29.test-token-%d", len(s.issued)+1)
	s.issued = append(s.issued, token)
	s.scopes = append(s.scopes, claims.Scope)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"access_token": token, "expires_in": 3600, "token_type": "Bearer"})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// Issued reports whether the server issued token.
func (s *TokenServer) Issued(token string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range s.issued {
		if t == token {
			return true
		}
	}
	return false
}

// Scopes are the scopes each assertion asked for, in order.
func (s *TokenServer) Scopes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.scopes...)
}

// ServiceAccountFile writes a service account's key file for project into
// dir, with a new RSA key and s as its token_uri, and returns its path.
func (s *TokenServer) ServiceAccountFile(t testing.TB, dir, project string) string {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	file := map[string]string{
		"type":           "service_account",
		"project_id":     project,
		"private_key_id": "test-key-1",
		"private_key":    string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email":   "assay-test@" + project + ".iam.gserviceaccount.com",
		"client_id":      "1234567890",
		"token_uri":      s.URL,
	}
	data, _ := json.MarshalIndent(file, "", "  ")
	path := filepath.Join(dir, "service-account.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
