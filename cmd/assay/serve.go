package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"time"

	"assay/runner"
	"assay/store"
	"assay/web"
)

func cmdServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("serve", stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on; anything but loopback needs --token")
	dbPath := fs.String("db", "assay.db", "SQLite database file")
	token := fs.String("token", envOr("ASSAY_TOKEN", ""), "access token for every page and API call (default $ASSAY_TOKEN)")
	maxUpload := fs.Int64("max-upload", web.DefaultMaxUpload>>20, "largest dataset upload, in MiB")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	db, err := store.Open(ctx, *dbPath)
	if err != nil {
		return err
	}
	defer db.Close()
	runs := runner.New(db, runner.Options{Logger: logger})
	srv, err := web.New(db, web.Config{Addr: *addr, Token: *token, MaxUpload: *maxUpload << 20, Logger: logger, Runner: runs})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	resumed, err := runs.ResumeUnfinished(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "assay %s serving http://%s (database %s)\n", version, ln.Addr(), *dbPath)
	if len(resumed) > 0 {
		fmt.Fprintf(stdout, "resumed unfinished runs %v\n", resumed)
	}
	// Stop in order: the HTTP server, then the runs (left resumable), then the database.
	err = srv.ListenAndServe(ctx, ln)
	closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if cerr := runs.Close(closeCtx); cerr != nil && err == nil {
		err = cerr
	}
	logger.Info("stopped")
	return err
}
