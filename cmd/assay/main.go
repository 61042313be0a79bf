// Command assay measures how well an LLM agent answers a golden dataset.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if code := finish(err, os.Stderr); code != 0 {
		os.Exit(code)
	}
}

// finish prints what err says, unless it was printed already or is a
// request for help, and returns the process's exit code.
func finish(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	if !errors.Is(err, errSilent) && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(stderr, "assay:", err)
	}
	return exitCode(err)
}

// errSilent marks a failure whose explanation was already printed.
var errSilent = errors.New("failed")

// exitError carries a specific exit code.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func exitCode(err error) int {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	return 1
}

const usage = `assay measures how well an LLM agent or model answers a golden dataset.

Usage:
  assay serve   [--addr 127.0.0.1:8080] [--db assay.db | --db postgres://…] [--token T] [--max-upload MiB]
                [--allowed-hosts NAME,...] [--allow-command-agents] [--session-idle 336h] [--session-max 2160h]
                [--tls-cert F --tls-key F] [--behind-proxy] [--backup-every 24h --backup-dir D --backup-keep 7]
  assay import  --results A.json --instances I.jsonl [--db F] [--json]   (an EEE run, e.g. k-eval's)
  assay import  --file F [--kind qa|mcq|math|code] [--name N] [--question-key K] [--answer-key K] [--db F] [--json]
  assay run     CONFIG | --config run.yaml [--db F] [--json] [-q|--quiet] [-o|--output-dir DIR [--format keval|eee]]
                [--log-format console|json]
                [--gate 'METRIC>=N' ...] [--baseline RUN_ID | --baseline-latest] [--tolerance T]
                [--gate-regressions] [--junit F] [--summary-md F] [--report-url URL]
  assay run     --resume RUN_ID [--db F] [--json] [the same CI flags]
  assay export  --run ID --format json|csv|html|eee|keval [--eee-version V] [--db F] [-o F (a folder for eee and keval)]
  assay route   --run ID [--orders R] [--seed S] [--weights 0.7,0.2,0.1] [--condition C] [--db F] [--json]
  assay backup  --to FILE [--db F]
  assay rebuild [--run ID] [--db F] [--json]   (computes again what is kept from the runs' records)
  assay migrate --from F.db --to postgres://USER@HOST:PORT/DB [--json]   (copies a SQLite database into a new Postgres one)
  assay audit   --run ID [--probes verbosity,position,self] [--samples N] [--budget USD] [--estimate]
                [--gate 'audit.verbosity<=0.2' ...] [--db F] [--json]   (the judge's biases; exit 1 when a gate fails)
  assay rejudge --run ID --config JUDGE_FILE [--gate EXPR ...] [--db F] [--json]
                (judge a finished run's answers again: a new run, no agent call; exits as assay run)
  assay view    FILE [FILE…] [--addr 127.0.0.1:PORT] [--no-browser]   (k-eval's view: result files in the report's pages)
  assay token   create --name N [--role owner|reviewer|viewer] | list [--json] | revoke NAME   [--db F]
  assay schema  run-file   (the run file's JSON Schema; docs/run-file.schema.json is its copy)
  assay version

Run 'assay <command> --help' for a command's flags.
`

// run is the whole program, callable from tests.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return &exitError{code: 2, err: errSilent}
	}
	if cmd, ok := commands[args[0]]; ok {
		return cmd(ctx, args[1:], stdout, stderr)
	}
	switch args[0] {
	case "version", "--version", "-v":
		fmt.Fprintln(stdout, "assay", version)
		return nil
	case "help", "--help", "-h":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return &exitError{code: 2, err: fmt.Errorf("unknown command %q", args[0])}
}

// commands are assay's commands by name, each given the arguments after it.
var commands = map[string]func(ctx context.Context, args []string, stdout, stderr io.Writer) error{
	"serve":   cmdServe,
	"import":  cmdImport,
	"run":     cmdRun,
	"backup":  cmdBackup,
	"token":   cmdToken,
	"export":  cmdExport,
	"route":   cmdRoute,
	"rebuild": cmdRebuild,
	"migrate": cmdMigrate,
	"audit":   cmdAudit,
	"rejudge": cmdRejudge,
	"view":    cmdView,
	"schema":  cmdSchema,
}

// newFlags returns a flag set that prints its errors to stderr and returns them.
func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("assay "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	madeFlags.Store(name, fs)
	return fs
}

// madeFlags are the flag sets made, by command: docs/cli.md is made from
// them (TestCLIDocsAreCurrent).
var madeFlags sync.Map

// parseFlags parses args and rejects stray positional arguments.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return &exitError{code: 2, err: errSilent}
	}
	if fs.NArg() > 0 {
		return &exitError{code: 2, err: fmt.Errorf("%s: unexpected argument %q", fs.Name(), fs.Arg(0))}
	}
	return nil
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
