package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"strings"
	"time"
)

// runLog is where assay run says what happens as it goes — the run made,
// its progress, warnings, the files written — on stderr: lines of text, or
// with --log-format json one JSON object per line in the shape k-eval's
// structlog writes ({"event", "level", "timestamp", and the fields}).
// --quiet leaves all of it out; errors are said whatever.
type runLog struct {
	w     io.Writer
	json  bool
	quiet bool
	now   func() time.Time
}

// Log formats.
const (
	logConsole = "console"
	logJSON    = "json"
)

// newRunLog checks --log-format.
func newRunLog(w io.Writer, format string, quiet bool) (*runLog, error) {
	if format != logConsole && format != logJSON {
		return nil, fmt.Errorf("run: --log-format is console or json, not %q", format)
	}
	return &runLog{w: w, json: format == logJSON, quiet: quiet, now: time.Now}, nil
}

// event says what happened: text for the console, event and fields for JSON.
func (l *runLog) event(level, event, text string, fields map[string]any) {
	if l.quiet && level != "error" {
		return
	}
	if !l.json {
		fmt.Fprintln(l.w, text)
		return
	}
	line := map[string]any{}
	maps.Copy(line, fields)
	line["event"], line["level"], line["timestamp"] = event, level, l.now().UTC().Format("2006-01-02T15:04:05.000000Z")
	b, _ := json.Marshal(line)
	fmt.Fprintf(l.w, "%s\n", b)
}

func (l *runLog) info(event, text string, fields map[string]any) {
	l.event("info", event, text, fields)
}

func (l *runLog) warning(text string) {
	l.event("warning", "warning", "warning: "+text, map[string]any{"message": text})
}

// failed says err, as finish would, and returns it marked as said: in JSON,
// as an event of level error, so that every line on stderr is one object.
func (l *runLog) failed(err error) error {
	if err == nil || !l.json || isSilent(err) {
		return err
	}
	l.event("error", "run failed", "", map[string]any{"message": err.Error(), "exit_code": exitCode(err)})
	return &exitError{code: exitCode(err), err: errSilent}
}

func isSilent(err error) bool {
	var ee *exitError
	return errors.As(err, &ee) && ee.err == errSilent || errors.Is(err, flag.ErrHelp)
}

// parseWithConfig parses args of assay run, where the run file may come
// first, as k-eval's command line gives it (k-eval run config.yaml -o
// results/ -q); the one positional argument is returned.
func parseWithConfig(fs *flag.FlagSet, args []string) (string, error) {
	positional, err := parsePositionals(fs, args)
	switch {
	case err != nil:
		return "", err
	case len(positional) > 1:
		return "", &exitError{code: 2, err: fmt.Errorf("%s: one run file, not %s", fs.Name(), strings.Join(positional, " "))}
	case len(positional) == 1:
		return positional[0], nil
	}
	return "", nil
}
