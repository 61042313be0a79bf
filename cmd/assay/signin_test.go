package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// serveDefault starts `assay serve` as a user would, with no token of
// theirs, and returns the sign-in address it prints and a stop function.
func serveDefault(t *testing.T, db string) (string, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--db", db}, pw, io.Discard)
		pw.Close()
	}()
	lines := bufio.NewScanner(pr)
	var signIn string
	for signIn == "" && lines.Scan() {
		if rest, ok := strings.CutPrefix(lines.Text(), "sign in: "); ok {
			signIn = rest
		}
	}
	go io.Copy(io.Discard, pr)
	if !regexp.MustCompile(`^http://127\.0\.0\.1:\d+/login\?code=\S{16,}$`).MatchString(signIn) {
		cancel()
		t.Fatalf("no sign-in address printed: %q", signIn)
	}
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("serve: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return signIn, stop
}

// A server nobody configured is not open to the machine's other users: it
// makes a token at start and prints a one-time sign-in address; a request
// without a key cannot start a program (a stdio MCP server), nor can a
// viewer's. The address signs in once and is no Bearer token.
func TestADefaultServerAsksForItsToken(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	signIn, stop := serveDefault(t, db)
	base, code, _ := strings.Cut(signIn, "/login?code=")

	call := func(method, path, bearer, contentType string, body []byte) (int, string) {
		req, _ := http.NewRequest(method, base+path, bytes.NewReader(body))
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if status, _ := call("GET", "/api/runs", "", "", nil); status != http.StatusUnauthorized {
		t.Errorf("the API without a key: %d, want 401", status)
	}
	if status, _ := call("GET", "/api/runs", code, "", nil); status != http.StatusUnauthorized {
		t.Errorf("the API with the sign-in code as a Bearer token: %d, want 401", status)
	}
	browser := signInAt(t, signIn)
	if resp, _ := browser.Get(base + "/api/runs"); resp == nil || resp.StatusCode != http.StatusOK {
		t.Errorf("the signed-in browser cannot read the API")
	}
	jar, _ := cookiejar.New(nil)
	other := &http.Client{Jar: jar}
	resp, err := other.Get(signIn)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(page), "signs in once") {
		t.Errorf("the sign-in address used a second time: %d at %s", resp.StatusCode, resp.Request.URL.Path)
	}

	var out bytes.Buffer
	if err := run(context.Background(), []string{"token", "create", "--name", "first", "--db", db}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	owner := strings.TrimSpace(out.String())
	marker := filepath.Join(dir, "started")
	condition := fmt.Sprintf(`{"name": "shell", "system_prompt": "", "mcp_servers": [{"name": "sh", "transport": "stdio",
		"command": "/bin/sh", "args": ["-c", "touch %s"]}]}`, marker)
	if status, _ := call("POST", "/api/conditions", "", "application/json", []byte(condition)); status != http.StatusUnauthorized {
		t.Errorf("a stdio MCP condition without a key: %d, want 401", status)
	}
	if status, body := call("POST", "/api/conditions", owner, "application/json", []byte(condition)); status != http.StatusCreated {
		t.Fatalf("a condition with the owner's token: %d %s", status, body)
	}
	var upload bytes.Buffer
	fmt.Fprint(&upload, "--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"qa.jsonl\"\r\n\r\n"+
		`{"id": "q1", "question": "2+2?", "answer": "4"}`+"\n\r\n--b--\r\n")
	if status, body := call("POST", "/api/datasets", owner, "multipart/form-data; boundary=b", upload.Bytes()); status != http.StatusCreated {
		t.Fatalf("upload: %d %s", status, body)
	}
	launch := []byte(`{"dataset_id": 1, "conditions": ["shell"], "run": {"agent": {"type": "openai", "model": "m",
		"base_url": "http://127.0.0.1:1/v1"}, "evaluators": ["exact_match"]}}`)
	if status, _ := call("POST", "/api/runs", "", "application/json", launch); status != http.StatusUnauthorized {
		t.Errorf("launching a stdio MCP condition without a key: %d, want 401", status)
	}
	out.Reset()
	var said bytes.Buffer
	if err := run(context.Background(), []string{"token", "create", "--name", "watcher", "--db", db}, &out, &said); err != nil {
		t.Fatal(err)
	}
	viewer := strings.TrimSpace(out.String())
	if !strings.Contains(said.String(), "watcher (viewer)") {
		t.Fatalf("the second token should be a viewer's: %q", said.String())
	}
	if status, body := call("POST", "/api/runs", viewer, "application/json", launch); status != http.StatusForbidden || !strings.Contains(body, "needs an owner") {
		t.Errorf("a viewer launching a stdio MCP condition: %d %s", status, body)
	}

	// The browser signed in stays so through a restart, whose address is new.
	stop()
	next, stop := serveDefault(t, db)
	defer stop()
	if nextBase, _, _ := strings.Cut(next, "/login?code="); nextBase != base {
		base = nextBase
	}
	if strings.Contains(next, code) {
		t.Error("a new start should print a new code")
	}
	resp, err = browser.Get(base + "/conditions")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Request.URL.Path != "/conditions" {
		t.Errorf("after a restart the browser was sent to %s", resp.Request.URL)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("a program was started")
	}
}

// signInAt opens a sign-in address in a new browser and returns it, signed in.
func signInAt(t *testing.T, address string) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	resp, err := browser.Get(address)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Request.URL.Path != "/runs" {
		t.Fatalf("the sign-in address %s led to %s (%d)", address, resp.Request.URL, resp.StatusCode)
	}
	return browser
}

// assay token login-url prints a fresh one-time address for the running
// server of a database: it signs in once.
func TestTokenLoginURLSignsInOnce(t *testing.T) {
	db := filepath.Join(t.TempDir(), "assay.db")
	signIn, _ := serveDefault(t, db)
	base, _, _ := strings.Cut(signIn, "/login?code=")
	var out bytes.Buffer
	if err := run(context.Background(), []string{"token", "login-url", "--db", db}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	address := strings.TrimSpace(out.String())
	if !strings.HasPrefix(address, base+"/login?code=") || address == signIn {
		t.Fatalf("login-url printed %q; the server is at %s", address, base)
	}
	signInAt(t, address)
	jar, _ := cookiejar.New(nil)
	resp, err := (&http.Client{Jar: jar}).Get(address)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the address used again: %d at %s", resp.StatusCode, resp.Request.URL.Path)
	}
	err = run(context.Background(), []string{"token", "login-url", "--db", filepath.Join(t.TempDir(), "new.db")}, io.Discard, io.Discard)
	if exitCodeOf(err) != 2 || !strings.Contains(err.Error(), "give --addr") {
		t.Errorf("login-url for a database no server started on: exit %d, %v", exitCodeOf(err), err)
	}
}

func TestNoAuthIsForLoopbackOnly(t *testing.T) {
	db := filepath.Join(t.TempDir(), "assay.db")
	err := run(context.Background(), []string{"serve", "--addr", "0.0.0.0:0", "--db", db, "--no-auth"}, io.Discard, io.Discard)
	if exitCodeOf(err) != 2 || !strings.Contains(err.Error(), "loopback only") {
		t.Errorf("--no-auth on every interface: exit %d, %v", exitCodeOf(err), err)
	}
}
