package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestTokenCommands(t *testing.T) {
	db := filepath.Join(t.TempDir(), "assay.db")
	var out, errOut bytes.Buffer
	// The first token is an owner's: asked for another role, none is made.
	if err := run(context.Background(), []string{"token", "create", "--name", "ci-bot", "--role", "viewer", "--db", db}, &out, &errOut); err == nil ||
		!strings.Contains(err.Error(), "The first token is an owner's") || out.Len() != 0 {
		t.Fatalf("a viewer's token first: %v, printed %q", err, out.String())
	}
	if err := run(context.Background(), []string{"token", "create", "--name", "alice", "--db", db}, io.Discard, &errOut); err != nil ||
		!strings.Contains(errOut.String(), "token for alice (owner) created") {
		t.Fatalf("the first token without --role: %v, %q", err, errOut.String())
	}
	errOut.Reset()
	if err := run(context.Background(), []string{"token", "create", "--name", "ci-bot", "--role", "viewer", "--db", db}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	secret := strings.TrimSpace(out.String())
	if !regexp.MustCompile(`^asy_[A-Za-z0-9_-]{43}$`).MatchString(secret) || strings.Contains(errOut.String(), secret) {
		t.Fatalf("token create printed %q (stderr %q), want the token alone on stdout: 256 random bits", out.String(), errOut.String())
	}
	if err := run(context.Background(), []string{"token", "create", "--name", "ci-bot", "--db", db}, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "already has a token") {
		t.Errorf("a second ci-bot: %v", err)
	}
	if err := run(context.Background(), []string{"token", "create", "--name", "x", "--role", "admin", "--db", db}, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), `Unknown role "admin"`) {
		t.Errorf("role admin: %v", err)
	}

	// A server with a named token may listen anywhere; the token works as Bearer.
	base := startServer(t, "--db", db, "--addr", "0.0.0.0:0")
	base = strings.Replace(base, "0.0.0.0", "127.0.0.1", 1)
	req, _ := http.NewRequest("GET", strings.Fields(base)[0]+"/api/runs", nil)
	req.Header.Set("Authorization", "Bearer "+secret)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("Bearer of the new token: %v %v", err, resp)
	}

	out.Reset()
	if err := run(context.Background(), []string{"token", "list", "--json", "--db", db}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	var list []struct {
		Name, Role string
		LastUsed   *time.Time `json:"last_used"`
		RevokedAt  *time.Time `json:"revoked_at"`
	}
	if err := json.Unmarshal(out.Bytes(), &list); err != nil || len(list) != 2 || list[1].Name != "ci-bot" || list[1].Role != "viewer" ||
		list[1].LastUsed == nil || list[1].RevokedAt != nil || strings.Contains(out.String(), secret) {
		t.Fatalf("token list --json = %s (%v)", out.String(), err)
	}
	if err := run(context.Background(), []string{"token", "revoke", "ci-bot", "--db", db}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("Bearer of the revoked token: %v %v", err, resp)
	}
	if err := run(context.Background(), []string{"token", "revoke", "ci-bot", "--db", db}, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), `No active token is named "ci-bot"`) {
		t.Errorf("revoking twice: %v", err)
	}
}

func TestServeRefusesAShortToken(t *testing.T) {
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "a.db"), "--token", "abc"}, &out, &errOut)
	if err == nil || exitCode(err) == 0 || !strings.Contains(err.Error(), "at least 16") {
		t.Errorf("serve --token abc: %v", err)
	}
	if sc := bufio.NewScanner(&out); sc.Scan() && strings.Contains(sc.Text(), "serving") {
		t.Errorf("it listened: %q", out.String())
	}
}
