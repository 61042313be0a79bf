package main

import (
	"context"
	"fmt"
	"io"

	"assay/config"
)

// cmdSchema prints a reference generated from the code: the run file's JSON
// Schema (assay schema run-file).
func cmdSchema(_ context.Context, args []string, stdout, stderr io.Writer) error {
	const usage = "usage: assay schema run-file   (the run file's JSON Schema, draft 2020-12)\n"
	if len(args) != 1 || args[0] != "run-file" {
		fmt.Fprint(stderr, usage)
		return &exitError{code: 2, err: errSilent}
	}
	b, err := config.Schema()
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s\n", b)
	return err
}
