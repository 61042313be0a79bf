package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"assay/internal/fixture"
	"assay/internal/pgtest"
)

// startServer runs `assay serve` in-process on a free port and returns its base URL.
func startServer(t *testing.T, args ...string) string {
	t.Helper()
	base, stop := serve(t, args...)
	t.Cleanup(stop)
	return base
}

// serve runs `assay serve` in-process on a free port and returns its base
// URL and a function that stops it and waits until it has. Unless args
// give a --token or an --addr, the server asks none (--no-auth): the
// tests of signing in start their own.
func serve(t *testing.T, args ...string) (string, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	db := pgtest.Database(t)
	if !slices.Contains(args, "--token") && !slices.Contains(args, "--addr") {
		args = append([]string{"--no-auth"}, args...)
	}
	go func() {
		done <- run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0", "--db", db}, args...), pw, io.Discard)
		pw.Close()
	}()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("serve: %v", err)
			}
		})
	}
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("server did not start: %v", err)
	}
	go io.Copy(io.Discard, pr)
	url := regexp.MustCompile(`https?://\S+`).FindString(line)
	if url == "" {
		t.Fatalf("no URL in %q", line)
	}
	return url, stop
}

// newBrowser starts Debian's headless Chromium. It fails, never skips, when Chromium is missing.
func newBrowser(t *testing.T, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("chromium is not installed: run `make test-deps` (apt-get install chromium)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-quic", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	)
	opts = append(opts, extra...)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(alloc)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	// Every page is loaded under assay's Content-Security-Policy: a
	// violation the browser reports fails the test.
	csp := &cspLog{}
	if err := chromedp.Listen(ctx, csp.listen); err != nil {
		t.Fatal(err)
	}
	// The browser lives as long as ctx; each test's actions get a deadline.
	limited, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() {
		cancelTimeout()
		cancelCtx()
		cancelAlloc()
		if v := csp.take(); len(v) > 0 {
			t.Errorf("the browser reported %d Content-Security-Policy violations: %q", len(v), v)
		}
	})
	return context.WithValue(limited, cspKey{}, csp)
}

// cspLog records the Content-Security-Policy violations a browser reports.
type cspLog struct {
	mu         sync.Mutex
	violations []string
}

type cspKey struct{}

func (l *cspLog) listen(ev any) {
	var text string
	switch e := ev.(type) {
	case *cdplog.EventEntryAdded:
		text = e.Entry.Text
	case *runtime.EventExceptionThrown:
		text = e.ExceptionDetails.Text
	}
	if strings.Contains(text, "Content Security Policy") {
		l.mu.Lock()
		l.violations = append(l.violations, text)
		l.mu.Unlock()
	}
}

// take returns the violations seen so far and forgets them.
func (l *cspLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	v := l.violations
	l.violations = nil
	return v
}

// cspViolations returns, and forgets, the violations the browser of ctx reported.
func cspViolations(ctx context.Context) []string {
	return ctx.Value(cspKey{}).(*cspLog).take()
}

// textOf returns the text of the first element matching a CSS selector, once
// there is one. It reads through a script rather than a node id, which a page
// that swaps its content (htmx) or finishes loading would invalidate.
func textOf(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	err := chromedp.Do(ctx, chromedp.WaitReady(chromedp.CSS(sel)))
	var s string
	if err == nil {
		s, err = chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`document.querySelector(%q).innerText`, sel)))
	}
	if err != nil {
		t.Fatalf("text of %s: %v", sel, err)
	}
	return strings.TrimSpace(s)
}

// screenshot saves the page to $ASSAY_SCREENSHOTS/name.png when that variable is set.
func screenshot(t *testing.T, ctx context.Context, name string) {
	dir := os.Getenv("ASSAY_SCREENSHOTS")
	if dir == "" {
		return
	}
	buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Logf("screenshot %s: %v", name, err)
		return
	}
	os.WriteFile(filepath.Join(dir, name+".png"), buf, 0o644)
}

func TestBrowserUploadDatasetAndCreateCondition(t *testing.T) {
	t.Parallel()
	base := startServer(t)
	ctx := newBrowser(t)
	file := fixture.Path("mmlu.jsonl")
	data := fixture.Read(t, "mmlu.jsonl")
	sum := sha256.Sum256(data)

	// Sent without a file, the form says so on its drop zone.
	err := chromedp.Do(ctx,
		chromedp.Navigate(base+"/datasets"),
		chromedp.WaitReady(chromedp.CSS("#upload")),
		chromedp.Click(chromedp.CSS("#upload button[type=submit]")),
		chromedp.WaitVisible(chromedp.CSS("#drop.missing")),
	)
	if err != nil {
		t.Fatalf("upload without a file: %v", err)
	}
	if got := textOf(t, ctx, "#file-name"); !strings.Contains(got, "Choose a file first") {
		t.Errorf("without a file the zone says %q", got)
	}
	err = chromedp.Do(ctx,
		chromedp.SetUploadFiles(chromedp.CSS("#file"), []string{file}),
		chromedp.WaitVisible(chromedp.CSS("#drop.over")),
		chromedp.Click(chromedp.CSS("#upload button[type=submit]")),
		chromedp.WaitVisible(chromedp.CSS("#sha256")),
	)
	if err != nil {
		t.Fatalf("upload: %v", err)
	}
	screenshot(t, ctx, "dataset")
	count, shown, flash := textOf(t, ctx, "#sample-count"), textOf(t, ctx, "#sha256"), textOf(t, ctx, ".flash")
	if count != "10" || shown != hex.EncodeToString(sum[:]) {
		t.Fatalf("dataset page shows %q samples, sha256 %q", count, shown)
	}
	if !strings.Contains(flash, "Imported 10 samples as mcq") {
		t.Errorf("flash %q", flash)
	}

	second := "#servers .server:nth-child(2) "
	err = chromedp.Do(ctx,
		chromedp.Navigate(base+"/conditions"),
		chromedp.Click(chromedp.CSS("#new-condition")),
		chromedp.WaitVisible(chromedp.CSS("#condition-form")),
		chromedp.SendKeys(chromedp.CSS("#name"), "with-everything"),
		chromedp.SendKeys(chromedp.CSS("#system_prompt"), "Use the tools to answer."),
		chromedp.Click(chromedp.CSS("input[name=require_mcp_tool_use]")),
		chromedp.Click(chromedp.CSS("#add-server")),
		chromedp.SendKeys(chromedp.CSS("#servers input[name=server_name]"), "everything"),
		chromedp.SendKeys(chromedp.CSS("#servers input[name=server_command]"), "node"),
		chromedp.SendKeys(chromedp.CSS("#servers textarea[name=server_args]"), "dist/index.js\nstdio"),
		chromedp.Click(chromedp.CSS("#add-server")),
		chromedp.SetValue(chromedp.CSS(second+"select"), "http"),
		chromedp.SendKeys(chromedp.CSS(second+"input[name=server_name]"), "docs"),
		chromedp.SendKeys(chromedp.CSS(second+"input[name=server_url]"), "http://127.0.0.1:8001/mcp"),
	)
	if err != nil {
		t.Fatalf("fill condition form: %v", err)
	}
	screenshot(t, ctx, "condition-form")
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS("#condition-form button[type=submit]")),
		chromedp.WaitVisible(chromedp.CSS("#conditions")),
	)
	if err != nil {
		t.Fatalf("save condition: %v", err)
	}
	screenshot(t, ctx, "conditions")
	listed := textOf(t, ctx, "#conditions tbody")
	for _, want := range []string{"with-everything", "everything (stdio)", "docs (http)", "tool use"} {
		if !strings.Contains(listed, want) {
			t.Errorf("conditions list %q lacks %q", listed, want)
		}
	}
}
