package main

import (
	"assay/eee"
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
	"assay/report"
	"assay/report/gate"
	"assay/runner"
	"assay/store"
	"assay/tally"
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
	a, err := parseRunArgs(args, stderr)
	if err != nil {
		return badUsage(err)
	}
	log, err := newRunLog(stderr, a.logFormat, a.quiet)
	if err != nil {
		return badUsage(err)
	}
	return log.failed(a.execute(ctx, log, stdout))
}

// runArgs are assay run's flags, k-eval's among them.
type runArgs struct {
	config, dbPath, outputDir, format, logFormat string
	resume, retry, rejudge                       int64
	extend, asJSON, quiet, estimate              bool
	ci                                           ciFlags
}

func parseRunArgs(args []string, stderr io.Writer) (*runArgs, error) {
	a := &runArgs{}
	fs := newFlags("run", stderr)
	fs.StringVar(&a.config, "config", "", "run configuration YAML (a superset of k-eval's); it may come first, as k-eval's: assay run CONFIG")
	fs.Int64Var(&a.resume, "resume", 0, "resume the unfinished run with this id instead")
	fs.Int64Var(&a.retry, "retry-errors", 0, "do the failed tasks of the finished run with this id again, and judge again the answers whose judge calls failed; the rest stays")
	fs.BoolVar(&a.extend, "extend", false, "with --resume: a run its stopping rule stopped early goes on toward its plan's end")
	dbPath := dbFlag(fs)
	fs.BoolVar(&a.asJSON, "json", false, "print one JSON object with the run's summary")
	for _, name := range []string{"quiet", "q"} {
		fs.BoolVar(&a.quiet, name, false, "print nothing on success but what --json asks for: no progress, no summary (errors still go to stderr)")
	}
	for _, name := range []string{"output-dir", "o"} {
		fs.StringVar(&a.outputDir, name, "", "also write the run's result files into this folder when it ends (made when missing), as k-eval does")
	}
	fs.StringVar(&a.format, "format", "keval", "the result files -o writes: keval (NAME_DATE_ID.json and .detailed.jsonl, as k-eval writes them) or eee (the official Every Eval Ever schema)")
	fs.StringVar(&a.logFormat, "log-format", logConsole, "progress and events on stderr: console (lines of text) or json (one JSON object per line: event, level, timestamp and fields)")
	a.ci.register(fs)
	positional, err := parseWithConfig(fs, args)
	if err != nil {
		return nil, err
	}
	a.dbPath = *dbPath
	switch {
	case positional != "" && a.config != "" && positional != a.config:
		return nil, fmt.Errorf("run: the run file is given twice (%s and --config %s)", positional, a.config)
	case positional != "":
		a.config = positional
	}
	if given := btoi(a.config != "") + btoi(a.resume != 0) + btoi(a.retry != 0); given != 1 {
		return nil, fmt.Errorf("run: give one of CONFIG (or --config FILE), --resume RUN_ID or --retry-errors RUN_ID")
	}
	if a.extend && a.resume == 0 {
		return nil, fmt.Errorf("run: --extend goes with --resume RUN_ID")
	}
	if _, ok := resultShapes[a.format]; !ok {
		return nil, fmt.Errorf("run: --format is keval or eee, not %q", a.format)
	}
	return a, a.ci.check()
}

// resultShapes are the files -o writes, by --format.
var resultShapes = map[string]eee.Shape{"keval": eee.ShapeKEval, "eee": eee.ShapeEEE}

// execute makes or takes up the run, executes it, says how it went and
// writes its files.
func (a *runArgs) execute(ctx context.Context, log *runLog, stdout io.Writer) error {
	db, err := tally.Open(ctx, a.dbPath)
	if err != nil {
		return badUsage(err)
	}
	defer db.Close()
	m := runner.New(db, runner.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Program: "assay run"})
	defer m.Close(context.Background())
	id, err := a.prepare(ctx, m, db, log)
	if err != nil {
		return badUsage(err)
	}
	stop := reportProgress(ctx, db, id, log)
	status, err := m.Execute(ctx, id)
	stop()
	if err != nil {
		return &exitError{code: exitIncomplete, err: err}
	}
	v, err := a.ci.outcome(context.WithoutCancel(ctx), db, id)
	if err != nil {
		return &exitError{code: exitIncomplete, err: err}
	}
	v.Summary.CountRateLimited(m.RateLimited(id))
	if status == store.RunCompleted && len(v.health) == 0 {
		if err := v.judgeAudit(ctx, m, &a.ci); err != nil {
			return &exitError{code: exitIncomplete, err: err}
		}
	}
	switch {
	case a.asJSON:
		if err := json.NewEncoder(stdout).Encode(v.output()); err != nil {
			return err
		}
	case !a.quiet:
		printSummary(stdout, v.Summary)
		printOutcome(stdout, v)
	}
	if err := a.ci.write(v); err != nil {
		return err
	}
	if err := a.writeResults(context.WithoutCancel(ctx), db, id, log); err != nil {
		return err
	}
	return runExit(v, status)
}

// prepare makes the run of the config, or readies the one to resume or
// retry, and returns its id.
func (a *runArgs) prepare(ctx context.Context, m *runner.Manager, db *store.DB, log *runLog) (int64, error) {
	if a.rejudge != 0 {
		return createRejudge(ctx, m, db, a, log)
	}
	id := max(a.resume, a.retry)
	if id == 0 {
		return createRun(ctx, m, db, a.config, &a.ci, log)
	}
	if err := a.ci.prepare(ctx, db, id); err != nil {
		return 0, err
	}
	if a.resume != 0 {
		if a.extend {
			if err := db.ExtendRun(ctx, id); err != nil {
				return 0, err
			}
		}
		return id, m.CanExecute(ctx, id)
	}
	r, err := m.ClearFailed(ctx, id)
	if err != nil {
		return 0, err
	}
	log.info("retrying", fmt.Sprintf("run %d: retrying %s", id, r), map[string]any{"run_id": id, "retrying": r.String()})
	return id, nil
}

// writeResults writes the run's result files into -o's folder, if asked.
func (a *runArgs) writeResults(ctx context.Context, db *store.DB, id int64, log *runLog) error {
	if a.outputDir == "" {
		return nil
	}
	if err := os.MkdirAll(a.outputDir, 0o755); err != nil {
		return fmt.Errorf("run: -o %s: %w", a.outputDir, err)
	}
	agg, inst, err := eee.WriteFiles(ctx, db, id, version, a.outputDir, resultShapes[a.format], eee.OfficialVersion)
	if err != nil {
		return fmt.Errorf("run: writing the result files into %s: %w", a.outputDir, err)
	}
	log.info("results written", fmt.Sprintf("results: %s\n         %s", agg, inst), map[string]any{"run_id": id, "aggregate": agg, "instances": inst})
	return nil
}

// createRun checks the config and the CI flags against it, then creates the run.
func createRun(ctx context.Context, m *runner.Manager, db *store.DB, path string, ci *ciFlags, log *runLog) (int64, error) {
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
		log.warning(w)
	}
	log.info("run created", fmt.Sprintf("run %d: %d tasks (%s × %s)", run.ID, run.TotalTasks,
		plural(len(run.Conditions), "condition"), plural(run.Repetitions, "repetition")),
		map[string]any{"run_id": run.ID, "tasks": run.TotalTasks, "conditions": len(run.Conditions), "repetitions": run.Repetitions})
	return run.ID, nil
}

// runExit is nil for a completed run whose gates held; otherwise an error
// with the exit code CI scripts rely on.
func runExit(v *ciOutcome, status store.RunStatus) error {
	id := v.Summary.RunID
	switch status {
	case store.RunCompleted:
	case store.RunRunning, store.RunPending:
		return &exitError{code: exitIncomplete, err: fmt.Errorf("interrupted: resume with  assay run --resume %d", id)}
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

// reportProgress says how far the run got every few seconds until stopped.
func reportProgress(ctx context.Context, db *store.DB, id int64, log *runLog) (stop func()) {
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
				sayProgress(ctx, db, id, log)
			}
		}
	}()
	return func() { cancel(); <-done }
}

func sayProgress(ctx context.Context, db *store.DB, id int64, log *runLog) {
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
	log.info("progress", fmt.Sprintf("run %d: %d/%d done, %d errors, $%.4f", id, done, run.TotalTasks, errs, cost),
		map[string]any{"run_id": id, "done": done, "total": run.TotalTasks, "errors": errs, "cost_usd": cost})
}

// printSummary writes the readable table: one row per condition and metric.
func printSummary(w io.Writer, s *report.Summary) {
	fmt.Fprintf(w, "run %d %q: %s", s.RunID, s.Name, s.Status)
	if s.Message != "" {
		fmt.Fprintf(w, " (%s)", s.Message)
	}
	fmt.Fprintf(w, "\ndataset sha256 %s · %d/%d results · %d errors · $%.4f\n\n", s.DatasetSHA256, s.Results, s.TotalTasks, s.Errors, s.CostUSD)
	printMetrics(w, s)
	for _, c := range s.Conditions {
		printConditionNotes(w, c)
	}
	fmt.Fprintln(w, "\nstd is over samples; stderr and CI treat a sample's repetitions as one cluster; errors are counted apart, never as zero scores.")
	if len(s.Conditions) > 1 {
		fmt.Fprintf(w, "detectable: the smallest true difference from %s a paired t-test (α = 0.05) finds with 80%% power on these samples.\n", s.Conditions[0].Name)
	}
	printVariance(w, s)
	printStop(w, s)
}

// printMetrics is the summary's table: a row per condition and metric.
func printMetrics(w io.Writer, s *report.Summary) {
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
}

// printConditionNotes says what else a condition met: tool calls, errors
// by kind, rate limits, batches, pass@k, means corrected by reviews and
// its most common errors.
func printConditionNotes(w io.Writer, c report.ConditionSummary) {
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
	for _, m := range c.Metrics {
		if p := m.PPI; p != nil {
			fmt.Fprintf(w, "%s: %s.%s corrected by reviews %.3f [%.3f, %.3f], shift %+.3f (%d of %d answers reviewed, %s order)\n",
				c.Name, m.Evaluator, m.Name, p.Mean, p.CI95[0], p.CI95[1], p.Shift, p.Reviewed, p.Of, p.Order)
		}
	}
	for _, e := range c.TopErrors[:min(len(c.TopErrors), 3)] {
		who := "agent"
		if e.Judge {
			who = "judge"
		}
		fmt.Fprintf(w, "  %d× %s %s: %s\n", e.Count, who, e.Kind, text.Clip(e.Message, 160))
	}
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
