package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"assay/config"
	"assay/report/gate"
	"assay/runner"
	"assay/store"
	"assay/tally"
)

// cmdRejudge judges a finished run's answers again with another judge: a
// new run that shares the source's answers, calls no agent and makes only
// the judge calls, then says how it went as assay run does (its exit
// codes, --json and gates alike).
func cmdRejudge(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	a, err := parseRejudgeArgs(args, stderr)
	if err != nil {
		return badUsage(err)
	}
	if a.estimate {
		return badUsage(estimateRejudge(ctx, a, stdout))
	}
	log, err := newRunLog(stderr, a.logFormat, a.quiet)
	if err != nil {
		return badUsage(err)
	}
	return log.failed(a.execute(ctx, log, stdout))
}

func parseRejudgeArgs(args []string, stderr io.Writer) (*runArgs, error) {
	a := &runArgs{format: "keval"}
	fs := newFlags("rejudge", stderr)
	fs.Int64Var(&a.rejudge, "run", 0, "the finished run whose answers to judge again")
	fs.StringVar(&a.config, "config", "", "a judge file: the run file's judge keys only ("+strings.Join(config.JudgeKeys, ", ")+")")
	dbPath := dbFlag(fs)
	fs.BoolVar(&a.asJSON, "json", false, "print one JSON object with the new run's summary, as assay run --json, with rejudged_from")
	for _, name := range []string{"quiet", "q"} {
		fs.BoolVar(&a.quiet, name, false, "print nothing on success but what --json asks for")
	}
	fs.StringVar(&a.logFormat, "log-format", logConsole, "progress and events on stderr: console or json")
	fs.BoolVar(&a.estimate, "estimate", false, "print the judge calls and cost it would make, and make nothing")
	a.ci.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	a.dbPath = *dbPath
	if a.rejudge == 0 || a.config == "" {
		return nil, fmt.Errorf("rejudge: give --run RUN_ID and --config JUDGE_FILE")
	}
	return a, a.ci.check()
}

// createRejudge checks the judge file and the gates, then creates the run
// judging the source's answers again.
func createRejudge(ctx context.Context, m *runner.Manager, db *store.DB, a *runArgs, log *runLog) (int64, error) {
	data, err := os.ReadFile(a.config)
	if err != nil {
		return 0, fmt.Errorf("read judge file: %w", err)
	}
	judge, keys, err := config.ParseJudge(data, a.config, os.Getenv, m.SavedRubrics(ctx))
	if err != nil {
		return 0, err
	}
	run, err := m.Rejudge(ctx, a.rejudge, judge, keys)
	if err != nil {
		return 0, err
	}
	ds, err := db.Dataset(ctx, run.DatasetID)
	if err != nil {
		return 0, err
	}
	if err := gate.Check(a.ci.gates, run.Config, ds.Kind, conditionNames(run.Conditions)); err != nil {
		db.DeleteRun(context.WithoutCancel(ctx), run.ID)
		return 0, err
	}
	log.info("run created", fmt.Sprintf("run %d judges again the answers of run %d: %d tasks, no agent call", run.ID, a.rejudge, run.TotalTasks),
		map[string]any{"run_id": run.ID, "rejudged_from": a.rejudge, "tasks": run.TotalTasks})
	return run.ID, nil
}

// estimateRejudge prints what judging the run's answers again would call
// and cost.
func estimateRejudge(ctx context.Context, a *runArgs, stdout io.Writer) error {
	db, err := tally.Open(ctx, a.dbPath)
	if err != nil {
		return err
	}
	defer db.Close()
	m := runner.New(db, runner.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Program: "assay rejudge"})
	defer m.Close(context.Background())
	data, err := os.ReadFile(a.config)
	if err != nil {
		return fmt.Errorf("read judge file: %w", err)
	}
	judge, keys, err := config.ParseJudge(data, a.config, os.Getenv, m.SavedRubrics(ctx))
	if err != nil {
		return err
	}
	e, err := m.RejudgeEstimate(ctx, a.rejudge, judge, keys)
	if err != nil {
		return err
	}
	if a.asJSON {
		return json.NewEncoder(stdout).Encode(map[string]any{"judge_calls": e.JudgeCalls, "agent_calls": 0, "cost_usd": e.CostUSD,
			"unpriced": nonNilStrings(e.Unpriced)})
	}
	cost := fmt.Sprintf("about $%.4f", e.CostUSD)
	if len(e.Unpriced) > 0 {
		cost += fmt.Sprintf(" (%s unpriced, counted as free)", strings.Join(e.Unpriced, ", "))
	}
	fmt.Fprintf(stdout, "judging run %d's answers again: %d judge calls, no agent call, %s\n", a.rejudge, e.JudgeCalls, cost)
	return nil
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
