package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"assay/internal/fixture"
)

// assay view opens k-eval's result file, as k-eval view does: it prints the
// address of the run's report, serves its report and samples without a
// token or a database of the user's, and leaves nothing behind when it ends.
func TestViewServesKEvalsFiles(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"view", fixture.Path("eee/ask-sre_20251123_3f1c2a9e.detailed.jsonl"), "--addr", "127.0.0.1:0", "--no-browser"}, pw, io.Discard)
		pw.Close()
	}()
	lines := bufio.NewScanner(pr)
	if !lines.Scan() {
		cancel()
		t.Fatalf("view printed nothing: %v", <-done)
	}
	address := lines.Text()
	go io.Copy(io.Discard, pr)
	if !regexp.MustCompile(`^http://127\.0\.0\.1:\d+/runs/1$`).MatchString(address) {
		cancel()
		t.Fatalf("view printed %q, want the run's report address", address)
	}
	get := func(url string) string {
		t.Helper()
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d", url, resp.StatusCode)
		}
		return string(b)
	}
	if page := get(address); !strings.Contains(page, "ask-sre") || !strings.Contains(page, `id="summary"`) {
		t.Error("the report of the file's run is not served")
	}
	if page := get(address + "/samples"); !strings.Contains(page, "What is the capital of Italy?") {
		t.Error("the samples page does not show the file's questions")
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 1 {
		t.Errorf("view keeps %d things in the temporary folder, want its one database folder", len(entries))
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("view ended with %v", err)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Errorf("view left %q behind", entries[0].Name())
	}
}

// assay view finds the other file of a run by its name, and says what is
// missing when it is not there.
func TestViewPairsTheFilesByName(t *testing.T) {
	dir := t.TempDir()
	write := func(name string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte("{}"), 0o644)
		return p
	}
	k, agg := write("run_20261128_0123abcd.detailed.jsonl"), write("run_20261128_0123abcd.json")
	lone := write("lone_samples.jsonl")
	for _, c := range []struct {
		file string
		want resultPair
		err  string
	}{
		{k, resultPair{agg, k}, ""},
		{agg, resultPair{agg, k}, ""},
		{lone, resultPair{}, "its aggregate lone.json is not beside it"},
		{filepath.Join(dir, "none.jsonl"), resultPair{}, "no such file"},
	} {
		got, err := pairOf(c.file)
		if got != c.want || (c.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: %+v, %v; want %+v, %q", filepath.Base(c.file), got, err, c.want, c.err)
		}
	}
	if err := run(context.Background(), []string{"view", k, "--addr", "0.0.0.0:0", "--no-browser"}, io.Discard, io.Discard); exitCodeOf(err) != 2 {
		t.Errorf("view on every interface: exit %d, %v", exitCodeOf(err), err)
	}
}
