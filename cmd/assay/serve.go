package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"

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
	srv, err := web.New(db, web.Config{Addr: *addr, Token: *token, MaxUpload: *maxUpload << 20, Logger: logger})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	fmt.Fprintf(stdout, "assay %s serving http://%s (database %s)\n", version, ln.Addr(), *dbPath)
	err = srv.ListenAndServe(ctx, ln)
	logger.Info("stopped")
	return err
}
