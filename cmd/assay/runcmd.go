package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"assay/config"
	"assay/internal/text"
	"assay/readmodel/tally"
	"assay/report"
	"assay/report/gate"
	"assay/runner"
	"assay/store"
)

// The exit codes of assay run, which CI scripts rely on.
const (
	exitGateFailed = 1 // a gate or (with --gate-regressions) a regression failed
	exitIncomplete = 2 // the run did not complete
	exitBadUsage   = 3 // a bad invocation or configuration
)

// badUsage marks err as the caller's mistake: exit 3.
func badUsage(err error) error {
	var ee *exitError
	if err == nil || errors.Is(err, flag.ErrHelp) || errors.As(err, &ee) && ee.code == exitBadUsage {
		return err
	}
	if errors.As(err, &ee) {
		return &exitError{code: exitBadUsage, err: ee.err}
	}
	return &exitError{code: exitBadUsage, err: err}
}

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("run", stderr)
	cfgPath := fs.String("config", "", "run configuration YAML (a superset of k-eval's)")
	resume := fs.Int64("resume", 0, "resume the unfinished run with this id instead")
	retry := fs.Int64("retry-errors", 0, "do the failed tasks of the finished run with this id again, and judge again the answers whose judge calls failed; the rest stays")
	extend := fs.Bool("extend", false, "with --resume: a run its stopping rule stopped early goes on toward its plan's end")
	dbPath := dbFlag(fs)
	asJSON := fs.Bool("json", false, "print one JSON object with the run's summary")
	quiet := fs.Bool("quiet", false, "no progress lines on stderr")
	var ci ciFlags
	ci.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return badUsage(err)
	}
	if given := btoi(*cfgPath != "") + btoi(*resume != 0) + btoi(*retry != 0); given != 1 {
		return badUsage(fmt.Errorf("run: give one of --config FILE, --resume RUN_ID or --retry-errors RUN_ID"))
	}
	if *extend && *resume == 0 {
		return badUsage(fmt.Errorf("run: --extend goes with --resume RUN_ID"))
	}
	if err := ci.check(); err != nil {
		return badUsage(err)
	}
	db, err := tally.Open(ctx, *dbPath)
	if err != nil {
		return badUsage(err)
	}
	defer db.Close()
	m := runner.New(db, runner.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Program: "assay run"})
	defer m.Close(context.Background())
	id := max(*resume, *retry)
	if id == 0 {
		if id, err = createRun(ctx, m, db, *cfgPath, &ci, stderr); err != nil {
			return badUsage(err)
		}
	} else if err := ci.prepare(ctx, db, id); err != nil {
		return badUsage(err)
	} else if *resume != 0 {
		if *extend {
			if err := db.ExtendRun(ctx, id); err != nil {
				return badUsage(err)
			}
		}
		if err := m.CanExecute(ctx, id); err != nil {
			return badUsage(err)
		}
	}
	if *retry != 0 {
		r, err := m.ClearFailed(ctx, id)
		if err != nil {
			return badUsage(err)
		}
		fmt.Fprintf(stderr, "run %d: retrying %s\n", id, r)
	}
	if !*quiet {
		stop := reportProgress(ctx, db, id, stderr)
		defer stop()
	}
	status, err := m.Execute(ctx, id)
	if err != nil {
		return &exitError{code: exitIncomplete, err: err}
	}
	v, err := ci.outcome(context.WithoutCancel(ctx), db, id)
	if err != nil {
		return &exitError{code: exitIncomplete, err: err}
	}
	v.Summary.CountRateLimited(m.RateLimited(id))
	if status == store.RunCompleted && len(v.health) == 0 {
		if err := v.judgeAudit(ctx, m, &ci); err != nil {
			return &exitError{code: exitIncomplete, err: err}
		}
	}
	if *asJSON {
		if err := json.NewEncoder(stdout).Encode(v.output()); err != nil {
			return err
		}
	} else {
		printSummary(stdout, v.Summary)
		printOutcome(stdout, v)
	}
	if err := ci.write(v); err != nil {
		return err
	}
	return runExit(v, status, stderr)
}

// createRun checks the config and the CI flags against it, then creates the run.
func createRun(ctx context.Context, m *runner.Manager, db *store.DB, path string, ci *ciFlags, stderr io.Writer) (int64, error) {
	cfg, err := config.Load(path, os.Getenv, m.SavedRubrics(ctx))
	if err != nil {
		return 0, err
	}
	ds, err := m.DatasetFromConfig(ctx, cfg)
	if err != nil {
		return 0, err
	}
	if err := ci.checkAudit(cfg); err != nil {
		return 0, err
	}
	if err := gate.Check(ci.gates, cfg, ds.Kind, conditionNames(cfg.Conditions())); err != nil {
		return 0, err
	}
	if err := ci.findBaseline(ctx, db, ds, conditionNames(cfg.Conditions()), 0); err != nil {
		return 0, err
	}
	run, err := m.Create(ctx, cfg, ds.ID, cfg.Conditions())
	if err != nil {
		return 0, err
	}
	warnings := cfg.Warnings()
	if w := cfg.StopWarning(ds.Samples); w != "" {
		warnings = append(warnings, w)
	}
	for _, w := range warnings {
		fmt.Fprintf(stderr, "warning: %s\n", w)
	}
	fmt.Fprintf(stderr, "run %d: %d tasks (%s × %s)\n", run.ID, run.TotalTasks,
		plural(len(run.Conditions), "condition"), plural(run.Repetitions, "repetition"))
	return run.ID, nil
}

// runExit is nil for a completed run whose gates held; otherwise an error
// with the exit code CI scripts rely on.
func runExit(v *ciOutcome, status store.RunStatus, stderr io.Writer) error {
	id := v.Summary.RunID
	switch status {
	case store.RunCompleted:
	case store.RunRunning, store.RunPending:
		fmt.Fprintf(stderr, "interrupted: resume with  assay run --resume %d\n", id)
		return &exitError{code: exitIncomplete, err: errSilent}
	default:
		msg := fmt.Sprintf("run %d ended %s", id, status)
		if v.Summary.Message != "" {
			msg += ": " + v.Summary.Message
		}
		return &exitError{code: exitIncomplete, err: errors.New(msg)}
	}
	if len(v.health) > 0 {
		return &exitError{code: exitIncomplete, err: fmt.Errorf("run %d completed, but %s", id, strings.Join(v.health, "; "))}
	}
	if !v.Passed() {
		return &exitError{code: exitGateFailed, err: fmt.Errorf("run %d: %s", id, v.failures())}
	}
	return nil
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
	progress, err := tally.Of(db).RunProgress(ctx, id)
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
	fmt.Fprintln(tw, "condition\tevaluator\tmetric\tmean\tstd\tstderr\t95% CI\tdetectable\tn\terrors\tcost $\t")
	for _, c := range s.Conditions {
		if len(c.Metrics) == 0 {
			fmt.Fprintf(tw, "%s\t—\t—\t\t\t\t\t\t0\t%d\t%.4f\t\n", c.Name, c.Errors, c.CostUSD)
		}
		for _, m := range c.Metrics {
			spread := fmt.Sprintf("%.3f\t%.3f\t[%.3f, %.3f]", m.Std, m.Stderr, m.CI95[0], m.CI95[1])
			if m.Samples < 2 {
				spread = "—\t—\t—" // one sample has no spread
			}
			mdd := "—"
			if m.MDD != nil {
				mdd = fmt.Sprintf("±%.3f", *m.MDD)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%.3f\t%s\t%s\t%d\t%d\t%.4f\t\n", c.Name, m.Evaluator, m.Name,
				m.Mean, spread, mdd, m.N, c.Errors+c.JudgeErrors, c.CostUSD)
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
		if c.RateLimited != nil && *c.RateLimited > 0 {
			fmt.Fprintf(w, "%s: %s answered 429 (rate limited) by the provider\n", c.Name, plural(int(*c.RateLimited), "call"))
		}
		if c.BatchedCalls != nil {
			fmt.Fprintf(w, "%s: %s answered in batches, at the batch price\n", c.Name, plural(*c.BatchedCalls, "call"))
		}
		if len(c.PassAtK) > 0 {
			var parts []string
			for _, k := range report.PassKs(c) {
				ci := c.PassAtKCI95[k]
				parts = append(parts, fmt.Sprintf("pass@%s %.3f [%.3f, %.3f]", k, c.PassAtK[k], ci[0], ci[1]))
			}
			fmt.Fprintf(w, "%s: %s\n", c.Name, strings.Join(parts, " · "))
		}
		for _, e := range c.TopErrors[:min(len(c.TopErrors), 3)] {
			who := "agent"
			if e.Judge {
				who = "judge"
			}
			fmt.Fprintf(w, "  %d× %s %s: %s\n", e.Count, who, e.Kind, text.Clip(e.Message, 160))
		}
	}
	fmt.Fprintln(w, "\nstd is over samples; stderr and CI treat a sample's repetitions as one cluster; errors are counted apart, never as zero scores.")
	if len(s.Conditions) > 1 {
		fmt.Fprintf(w, "detectable: the smallest true difference from %s a paired t-test (α = 0.05) finds with 80%% power on these samples.\n", s.Conditions[0].Name)
	}
	printVariance(w, s)
	printStop(w, s)
}

// printStop says what the run's stopping rule did, if it has one.
func printStop(w io.Writer, s *report.Summary) {
	f := s.Stopping
	if f == nil {
		return
	}
	rule := f.Rule.Describe(f.Metric)
	switch st := f.Stopped; {
	case st != nil && st.Extended:
		fmt.Fprintf(w, "stop: stopped early once (%s), then extended toward the plan\n", st.Reason)
	case st != nil && st.DecidedAt > 0:
		fmt.Fprintf(w, "stop: the rule held after %d of %d samples — %s; %d samples were done when the run stopped (those under way finished); %s and %s not made\n",
			st.DecidedAt, st.OfSamples, st.Reason, st.Samples, plural(st.SavedTasks, "answer"), plural(st.SavedCalls, "model call"))
	case st != nil:
		fmt.Fprintf(w, "stop: stopped early after %d of %d samples: %s\n", st.Samples, st.OfSamples, st.Reason)
	case s.Status == store.RunCompleted && s.Results >= s.TotalTasks:
		fmt.Fprintf(w, "stop: the rule was not met (%s): the run ran its whole plan\n", rule)
	default:
		fmt.Fprintf(w, "stop: %s; %d samples whole so far\n", rule, f.Samples)
	}
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// printVariance says, per condition and metric, what share of the spread is
// the samples', the agent's and the judge's, when repetitions tell them apart.
func printVariance(w io.Writer, s *report.Summary) {
	var lines []string
	for _, c := range s.Conditions {
		for _, m := range c.Metrics {
			v := m.Variance
			if v == nil || v.Total == 0 || m.Samples < 2 || (!v.AgentMeasured && !v.JudgeMeasured) {
				continue
			}
			sh, ag, jg := v.Shares()
			judge := "—"
			if v.JudgeMeasured {
				judge = fmt.Sprintf("%.0f%%", 100*jg)
			}
			lines = append(lines, fmt.Sprintf("  %s %s.%s: sample %.0f%% · agent %.0f%% · judge %s", c.Name, m.Evaluator, m.Name, 100*sh, 100*ag, judge))
		}
	}
	if len(lines) > 0 {
		fmt.Fprintln(w, "where the variance comes from:")
		for _, l := range lines {
			fmt.Fprintln(w, l)
		}
	}
}
