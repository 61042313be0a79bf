package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// Asking a command for help prints its usage and exits 0, without an
// error line: a script may run `assay run --help` to check its flags.
func TestHelpExitsZero(t *testing.T) {
	for _, c := range []struct {
		args []string
		flag string // a flag the usage names
	}{
		{[]string{"serve", "--help"}, "-addr"},
		{[]string{"import", "--help"}, "-file"},
		{[]string{"run", "--help"}, "-gate"},
		{[]string{"run", "-h"}, "-config"},
		{[]string{"export", "--help"}, "-format"},
		{[]string{"route", "--help"}, "-orders"},
		{[]string{"backup", "--help"}, "-to"},
		{[]string{"token", "--help"}, "--role"},
		{[]string{"--help"}, "assay run"},
	} {
		var stdout, stderr bytes.Buffer
		code := finish(run(context.Background(), c.args, &stdout, &stderr), &stderr)
		if code != 0 {
			t.Errorf("assay %s: exit %d, want 0; stderr %q", strings.Join(c.args, " "), code, stderr.String())
		}
		if strings.Contains(stderr.String(), "assay:") {
			t.Errorf("assay %s printed an error: %q", strings.Join(c.args, " "), stderr.String())
		}
		if out := stdout.String() + stderr.String(); !strings.Contains(out, c.flag) {
			t.Errorf("assay %s: the usage does not name %s:\n%s", strings.Join(c.args, " "), c.flag, out)
		}
	}
}
