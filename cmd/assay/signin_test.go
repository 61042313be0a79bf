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
	if !regexp.MustCompile(`^http://127\.0\.0\.1:\d+/login\?token=\S{16,}$`).MatchString(signIn) {
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
// makes a token at start and prints a sign-in address; a request without it
// cannot start a program (a stdio MCP server), nor can a viewer's.
func TestADefaultServerAsksForItsToken(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "assay.db")
	signIn, stop := serveDefault(t, db)
	base, token, _ := strings.Cut(signIn, "/login?token=")

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
	if code, _ := call("GET", "/api/runs", "", "", nil); code != http.StatusUnauthorized {
		t.Errorf("the API without the token: %d, want 401", code)
	}
	if code, body := call("GET", "/api/runs", token, "", nil); code != http.StatusOK {
		t.Fatalf("the API with the printed token: %d %s", code, body)
	}

	marker := filepath.Join(dir, "started")
	condition := fmt.Sprintf(`{"name": "shell", "system_prompt": "", "mcp_servers": [{"name": "sh", "transport": "stdio",
		"command": "/bin/sh", "args": ["-c", "touch %s"]}]}`, marker)
	if code, _ := call("POST", "/api/conditions", "", "application/json", []byte(condition)); code != http.StatusUnauthorized {
		t.Errorf("a stdio MCP condition without the token: %d, want 401", code)
	}
	if code, body := call("POST", "/api/conditions", token, "application/json", []byte(condition)); code != http.StatusCreated {
		t.Fatalf("a condition with the token: %d %s", code, body)
	}
	var upload bytes.Buffer
	fmt.Fprint(&upload, "--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"qa.jsonl\"\r\n\r\n"+
		`{"id": "q1", "question": "2+2?", "answer": "4"}`+"\n\r\n--b--\r\n")
	if code, body := call("POST", "/api/datasets", token, "multipart/form-data; boundary=b", upload.Bytes()); code != http.StatusCreated {
		t.Fatalf("upload: %d %s", code, body)
	}
	launch := []byte(`{"dataset_id": 1, "conditions": ["shell"], "run": {"agent": {"type": "openai", "model": "m",
		"base_url": "http://127.0.0.1:1/v1"}, "evaluators": ["exact_match"]}}`)
	if code, _ := call("POST", "/api/runs", "", "application/json", launch); code != http.StatusUnauthorized {
		t.Errorf("launching a stdio MCP condition without the token: %d, want 401", code)
	}
	stop()
	var out bytes.Buffer
	if err := run(context.Background(), []string{"token", "create", "--name", "first", "--db", db}, &out, io.Discard); err != nil {
		t.Fatal(err)
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

	// A browser opens the printed address once and stays signed in, through a restart.
	signIn, stop = serveDefault(t, db)
	base, _, _ = strings.Cut(signIn, "/login?token=")
	if code, body := call("POST", "/api/runs", viewer, "application/json", launch); code != http.StatusForbidden || !strings.Contains(body, "needs an owner") {
		t.Errorf("a viewer launching a stdio MCP condition: %d %s", code, body)
	}
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	resp, err := browser.Get(signIn)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Request.URL.Path != "/runs" {
		t.Fatalf("the sign-in address led to %s (%d)", resp.Request.URL, resp.StatusCode)
	}
	stop()
	signIn, stop = serveDefault(t, db)
	if next, _, _ := strings.Cut(signIn, "/login?token="); next == base {
		t.Log("the same port again")
	} else {
		base = next
	}
	if strings.Contains(signIn, token) {
		t.Error("a new start should make a new token")
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

func TestNoAuthIsForLoopbackOnly(t *testing.T) {
	db := filepath.Join(t.TempDir(), "assay.db")
	err := run(context.Background(), []string{"serve", "--addr", "0.0.0.0:0", "--db", db, "--no-auth"}, io.Discard, io.Discard)
	if exitCodeOf(err) != 2 || !strings.Contains(err.Error(), "loopback only") {
		t.Errorf("--no-auth on every interface: exit %d, %v", exitCodeOf(err), err)
	}
}
