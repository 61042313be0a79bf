package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"text/tabwriter"
	"time"

	"assay/report"
	"assay/runner"
	"assay/runner/config"
	"assay/store"
)

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("run", stderr)
	cfgPath := fs.String("config", "", "run configuration YAML (a superset of k-eval's)")
	resume := fs.Int64("resume", 0, "resume the unfinished run with this id instead")
	dbPath := fs.String("db", "assay.db", "SQLite database file")
	asJSON := fs.Bool("json", false, "print one JSON object with the run's summary")
	quiet := fs.Bool("quiet", false, "no progress lines on stderr")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if (*cfgPath == "") == (*resume == 0) {
		return &exitError{code: 2, err: fmt.Errorf("run: give --config FILE or --resume RUN_ID")}
	}
	db, err := store.Open(ctx, *dbPath)
	if err != nil {
		return err
	}
	defer db.Close()
	m := runner.New(db, runner.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Program: "assay run"})
	defer m.Close(context.Background())
	id := *resume
	if id == 0 {
		if id, err = createRun(ctx, m, *cfgPath, stderr); err != nil {
			return err
		}
	}
	if !*quiet {
		stop := reportProgress(ctx, db, id, stderr)
		defer stop()
	}
	status, err := m.Execute(ctx, id)
	if err != nil {
		return err
	}
	s, err := report.Summarize(context.WithoutCancel(ctx), db, id)
	if err != nil {
		return err
	}
	if *asJSON {
		if err := json.NewEncoder(stdout).Encode(s); err != nil {
			return err
		}
	} else {
		printSummary(stdout, s)
	}
	return runExit(status, id, stderr)
}

func createRun(ctx context.Context, m *runner.Manager, path string, stderr io.Writer) (int64, error) {
	cfg, err := config.Load(path, os.Getenv)
	if err != nil {
		return 0, err
	}
	run, err := m.CreateFromConfig(ctx, cfg)
	if err != nil {
		return 0, err
	}
	fmt.Fprintf(stderr, "run %d: %d tasks (%s × %s)\n", run.ID, run.TotalTasks,
		plural(len(run.Conditions), "condition"), plural(run.Repetitions, "repetition"))
	return run.ID, nil
}

// runExit is nil for a completed run; otherwise an error with a distinct exit code.
func runExit(status store.RunStatus, id int64, stderr io.Writer) error {
	switch status {
	case store.RunCompleted:
		return nil
	case store.RunRunning, store.RunPending:
		fmt.Fprintf(stderr, "interrupted: resume with  assay run --resume %d\n", id)
		return &exitError{code: 130, err: errSilent}
	}
	return &exitError{code: 1, err: fmt.Errorf("run %d ended %s", id, status)}
}

// reportProgress prints a line to stderr every few seconds until stopped.
func reportProgress(ctx context.Context, db *store.DB, id int64, w io.Writer) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(3 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				printProgress(ctx, db, id, w)
			}
		}
	}()
	return func() { cancel(); <-done }
}

func printProgress(ctx context.Context, db *store.DB, id int64, w io.Writer) {
	run, err := db.Run(ctx, id)
	if err != nil {
		return
	}
	progress, err := db.RunProgress(ctx, id)
	if err != nil {
		return
	}
	var done, errs int
	var cost float64
	for _, p := range progress {
		done += p.Done
		errs += p.Errors
		cost += p.CostUSD
	}
	fmt.Fprintf(w, "run %d: %d/%d done, %d errors, $%.4f\n", id, done, run.TotalTasks, errs, cost)
}

// printSummary writes the readable table: one row per condition and metric.
func printSummary(w io.Writer, s *report.Summary) {
	fmt.Fprintf(w, "run %d %q: %s", s.RunID, s.Name, s.Status)
	if s.Message != "" {
		fmt.Fprintf(w, " (%s)", s.Message)
	}
	fmt.Fprintf(w, "\ndataset sha256 %s · %d/%d results · %d errors · $%.4f\n\n", s.DatasetSHA256, s.Results, s.TotalTasks, s.Errors, s.CostUSD)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "condition\tevaluator\tmetric\tmean\tstd\tstderr\t95% CI\tn\terrors\tcost $\t")
	for _, c := range s.Conditions {
		if len(c.Metrics) == 0 {
			fmt.Fprintf(tw, "%s\t—\t—\t\t\t\t\t0\t%d\t%.4f\t\n", c.Name, c.Errors, c.CostUSD)
		}
		for _, m := range c.Metrics {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%.3f\t%.3f\t%.3f\t[%.3f, %.3f]\t%d\t%d\t%.4f\t\n", c.Name, m.Evaluator, m.Name,
				m.Mean, m.Std, m.Stderr, m.CI95[0], m.CI95[1], m.N, c.Errors+c.JudgeErrors, c.CostUSD)
		}
	}
	tw.Flush()
	for _, c := range s.Conditions {
		if c.ToolCalls > 0 {
			fmt.Fprintf(w, "%s: %s, %d failed\n", c.Name, plural(c.ToolCalls, "MCP tool call"), c.ToolErrors)
		}
		if c.Errors > 0 {
			fmt.Fprintf(w, "%s: %s: %s\n", c.Name, plural(c.Errors, "agent error"), report.KindsText(c.ErrorKinds))
		}
		if c.JudgeErrors > 0 {
			fmt.Fprintf(w, "%s: %s: %s\n", c.Name, plural(c.JudgeErrors, "judge error"), report.KindsText(c.JudgeErrorKinds))
		}
	}
	fmt.Fprintln(w, "\nstd is over samples; stderr and CI treat a sample's repetitions as one cluster; errors are counted apart, never as zero scores.")
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
