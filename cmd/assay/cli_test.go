package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "write docs/cli.md from the commands' flag sets")

// cliCommands are the commands docs/cli.md gives, in its order.
var cliCommands = [][]string{{"serve"}, {"run"}, {"import"}, {"export"}, {"view"}, {"route"}, {"audit"}, {"rejudge"}, {"rebuild"},
	{"backup"}, {"migrate"}, {"token", "create"}, {"token", "list"}, {"token", "revoke"}, {"token", "login-url"}}

// cliMarkdown is docs/cli.md as the commands' flag sets make it: each
// command's usage line and a row per flag.
func cliMarkdown(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	b.WriteString("# The command line\n\n<!-- Generated from the commands' flag sets by go test ./cmd/assay -run TestCLIDocsAreCurrent -update; do not edit. -->\n\n")
	b.WriteString("Every command that takes `--db` takes a SQLite file or a `postgres://` DSN (default `ASSAY_DB`, else `assay.db`).\nExit codes of `assay run`: 0 passed, 1 a gate failed, 2 the run did not complete (or is no result to act on), 3 bad usage.\n\n")
	fmt.Fprintf(&b, "```\n%s```\n", strings.TrimPrefix(usage, "assay measures how well an LLM agent or model answers a golden dataset.\n\n"))
	for _, cmd := range cliCommands {
		if err := run(context.Background(), append(cmd, "-h"), io.Discard, io.Discard); err != nil && exitCodeOf(err) != 0 {
			t.Fatalf("assay %s -h: %v", strings.Join(cmd, " "), err)
		}
		v, ok := madeFlags.Load(strings.Join(cmd, " "))
		if !ok {
			t.Fatalf("assay %s made no flag set", strings.Join(cmd, " "))
		}
		fs := v.(*flag.FlagSet)
		fmt.Fprintf(&b, "\n## %s\n\n| flag | default | what |\n| --- | --- | --- |\n", fs.Name())
		fs.VisitAll(func(f *flag.Flag) {
			kind, about := flag.UnquoteUsage(f)
			def := f.DefValue
			switch {
			case f.Name == "db":
				def = "`assay.db`" // what it is without ASSAY_DB, wherever the docs are made
			case def == "" || def == "false" || def == "0" || def == "0s":
				def = ""
			default:
				def = "`" + def + "`"
			}
			fmt.Fprintf(&b, "| `--%s%s` | %s | %s |\n", f.Name, strings.TrimRight(" "+kind, " "), def, strings.ReplaceAll(about, "|", "\\|"))
		})
	}
	return b.Bytes()
}

// docs/cli.md is the commands' flag sets as they stand.
func TestCLIDocsAreCurrent(t *testing.T) {
	t.Setenv("ASSAY_DB", "")
	t.Setenv("ASSAY_TOKEN", "")
	want := cliMarkdown(t)
	path := filepath.Join("..", "..", "docs", "cli.md")
	if *update {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, want) {
		t.Error("docs/cli.md is stale: run go test ./cmd/assay -run TestCLIDocsAreCurrent -update")
	}
}
