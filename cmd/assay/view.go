package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"assay/eee"
	"assay/runner"
	"assay/store"
	"assay/store/ingest"
	"assay/tally"
	"assay/web"
)

// cmdView opens result files — k-eval's (X.detailed.jsonl with X.json
// beside it) or EEE's pairs — in assay's report and samples pages, as
// k-eval view does: into a database of its own, in a temporary folder
// removed when it ends (Ctrl-C), without a token, on loopback.
func cmdView(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("view", stderr)
	addr := fs.String("addr", "127.0.0.1:0", "address to serve on, on loopback (port 0: any free one)")
	noBrowser := fs.Bool("no-browser", false, "print the address only; do not open a browser")
	files, err := parsePositionals(fs, args)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return &exitError{code: 2, err: errors.New("view: give the result files: X.detailed.jsonl (k-eval's, with X.json beside it), or an EEE pair")}
	}
	if !web.IsLoopback(*addr) {
		return &exitError{code: 2, err: fmt.Errorf("view: --addr %s: the viewer asks no token, so it listens on loopback only (127.0.0.1:PORT)", *addr)}
	}
	pairs, err := resultPairs(files)
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	dir, err := os.MkdirTemp("", "assay-view-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	db, err := tally.Open(ctx, filepath.Join(dir, "view.db"))
	if err != nil {
		return err
	}
	defer db.Close()
	var runs []int64
	for _, p := range pairs {
		id, err := importPair(ctx, db, p)
		if err != nil {
			return err
		}
		runs = append(runs, id)
	}
	return serveView(ctx, db, *addr, runs, !*noBrowser, stdout)
}

// resultPair is a run's two result files.
type resultPair struct{ aggregate, instances string }

// resultPairs pairs each file given with the other file of its run, found
// by name: X.detailed.jsonl (k-eval's) or X_samples.jsonl or X.jsonl (EEE's)
// and X.json.
func resultPairs(files []string) ([]resultPair, error) {
	var out []resultPair
	for _, f := range files {
		p, err := pairOf(f)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out, nil
}

func pairOf(file string) (resultPair, error) {
	exists := func(path string) bool {
		st, err := os.Stat(path)
		return err == nil && st.Mode().IsRegular()
	}
	if !exists(file) {
		return resultPair{}, fmt.Errorf("view: %s: no such file", file)
	}
	for _, suffix := range []string{".detailed.jsonl", "_samples.jsonl", ".jsonl"} {
		if stem, ok := strings.CutSuffix(file, suffix); ok {
			if agg := stem + ".json"; exists(agg) {
				return resultPair{agg, file}, nil
			}
			return resultPair{}, fmt.Errorf("view: %s: its aggregate %s.json is not beside it", file, filepath.Base(stem))
		}
	}
	if stem, ok := strings.CutSuffix(file, ".json"); ok {
		for _, suffix := range []string{".detailed.jsonl", "_samples.jsonl", ".jsonl"} {
			if exists(stem + suffix) {
				return resultPair{file, stem + suffix}, nil
			}
		}
		return resultPair{}, fmt.Errorf("view: %s: no instances file beside it (%s.detailed.jsonl, _samples.jsonl or .jsonl)", file, filepath.Base(stem))
	}
	return resultPair{}, fmt.Errorf("view: %s: want X.detailed.jsonl (k-eval's), an EEE X_samples.jsonl or X.jsonl, or their X.json", file)
}

// importPair imports one run's files, as assay import --results does.
func importPair(ctx context.Context, db *store.DB, p resultPair) (int64, error) {
	f := eee.Files{ResultsName: p.aggregate, InstancesName: p.instances}
	var err error
	if f.Results, err = ingest.ReadFile(p.aggregate); err != nil {
		return 0, fmt.Errorf("view: %w", err)
	}
	if f.Instances, err = eee.File(p.instances); err != nil {
		return 0, fmt.Errorf("view: %w", err)
	}
	out, err := eee.Import(ctx, db, f)
	if err != nil {
		return 0, fmt.Errorf("view: %w", err)
	}
	return out.RunID, nil
}

// serveView serves the runs' pages until ctx ends, and says where.
func serveView(ctx context.Context, db *store.DB, addr string, runs []int64, browse bool, stdout io.Writer) error {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	m := runner.New(db, runner.Options{Logger: logger, Program: "assay view"})
	srv, err := web.New(db, web.Config{Addr: addr, Logger: logger, Runner: m})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("view: listen: %w", err)
	}
	base := "http://" + ln.Addr().String()
	first := fmt.Sprintf("%s/runs/%d", base, runs[0])
	fmt.Fprintln(stdout, first)
	for _, id := range runs[1:] {
		fmt.Fprintf(stdout, "%s/runs/%d\n", base, id)
	}
	fmt.Fprintln(stdout, "  (press Ctrl-C to stop; the files are not changed, and nothing is kept)")
	if browse {
		openBrowser(first)
	}
	err = srv.ListenAndServe(ctx, ln)
	closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if cerr := srv.Close(closeCtx); cerr != nil && err == nil {
		err = cerr
	}
	if cerr := m.Close(closeCtx); cerr != nil && err == nil {
		err = cerr
	}
	return err
}

// openBrowser opens url in the desktop's browser, if there is one.
func openBrowser(url string) {
	name := "xdg-open"
	if runtime.GOOS == "darwin" {
		name = "open"
	}
	if path, err := exec.LookPath(name); err == nil {
		cmd := exec.Command(path, url)
		if cmd.Start() == nil {
			go cmd.Wait()
		}
	}
}

// parsePositionals parses args whose positional arguments may come before,
// between or after the flags, and returns them.
func parsePositionals(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, &exitError{code: 2, err: errSilent}
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}
