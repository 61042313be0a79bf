package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"assay/internal/outfile"
	"assay/runner"
	"assay/store"
	"assay/tally"
	"assay/web"
)

// leaseCheck is how often a server looks for unfinished runs that no live
// process holds (a killed assay run, a stopped server) and takes them over.
const leaseCheck = 10 * time.Second

func cmdServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("serve", stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on; anything but loopback needs --token")
	dbPath := dbFlag(fs)
	token := fs.String("token", envOr("ASSAY_TOKEN", ""), "the owner's access token, at least 16 characters (default $ASSAY_TOKEN, else one made at each start and printed with a sign-in address); assay token create makes named ones")
	noAuth := fs.Bool("no-auth", false, "ask no token of anyone who reaches the server: every local user and program is an owner and may start programs (loopback only)")
	maxUpload := fs.Int64("max-upload", web.DefaultMaxUpload>>20, "largest dataset upload, in MiB")
	allowedHosts := fs.String("allowed-hosts", "", "host names besides localhost that a server without --token answers to, comma-separated")
	allowCommands := fs.Bool("allow-command-agents", false, "let the run form start command agents (programs run on this machine)")
	tlsCert := fs.String("tls-cert", "", "serve HTTPS with this PEM certificate (and --tls-key)")
	tlsKey := fs.String("tls-key", "", "the certificate's PEM private key")
	backupEvery := fs.Duration("backup-every", 0, "back the database up this often while serving (e.g. 24h), into --backup-dir")
	backupDir := fs.String("backup-dir", "", "where scheduled backups go, as assay-YYYYMMDD-HHMMSS.mmm.db")
	backupKeep := fs.Int("backup-keep", 7, "how many scheduled backups to keep")
	behindProxy := fs.Bool("behind-proxy", false, "take client addresses (for the sign-in limit and logs) from the X-Forwarded-For of a proxy on a private network")
	sessionIdle := fs.Duration("session-idle", web.DefaultSessionIdle, "a browser's session ends after this long without a request")
	sessionMax := fs.Duration("session-max", web.DefaultSessionMax, "and this long after sign-in, whatever happens")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	hosts, err := web.AllowedHosts(*allowedHosts)
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	if *backupEvery > 0 && store.IsPostgres(*dbPath) {
		return &exitError{code: 2, err: fmt.Errorf("serve: --backup-every copies a SQLite file; %s is a Postgres database: back it up with Postgres's own tools (pg_dump, or the server's continuous archiving)", store.Redacted(*dbPath))}
	}
	if *backupEvery > 0 {
		if st, err := os.Stat(*backupDir); *backupDir == "" || err != nil || !st.IsDir() {
			return &exitError{code: 2, err: fmt.Errorf("serve: --backup-every needs --backup-dir naming a folder that exists")}
		}
		if *backupKeep < 1 {
			return &exitError{code: 2, err: fmt.Errorf("serve: --backup-keep must be at least 1")}
		}
	}
	generated := false
	switch {
	case *noAuth && *token != "":
		return &exitError{code: 2, err: fmt.Errorf("serve: --no-auth and --token (or ASSAY_TOKEN) contradict each other: pass one")}
	case *noAuth && !web.IsLoopback(*addr):
		return &exitError{code: 2, err: fmt.Errorf("serve: --no-auth is for a server on loopback only, not %s: anyone who reaches it could start programs as you", *addr)}
	case !*noAuth && *token == "":
		// As Jupyter does: a server nobody configured is not open to the
		// machine's other users and programs.
		*token, generated = rand.Text(), true
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	db, err := tally.Open(ctx, *dbPath)
	if err != nil {
		return err
	}
	defer db.Close()
	pageSize, err := db.FilePageSize(ctx)
	if err != nil {
		return err
	}
	runs := runner.New(db, runner.Options{Logger: logger, Program: "assay serve", IndexWhenIdle: true})
	srv, err := web.New(db, web.Config{
		Addr:               *addr,
		Token:              *token,
		TokenGenerated:     generated,
		MaxUpload:          *maxUpload << 20,
		Logger:             logger,
		Runner:             runs,
		AllowedHosts:       hosts,
		AllowCommandAgents: *allowCommands,
		BehindProxy:        *behindProxy,
		TLSCert:            *tlsCert,
		TLSKey:             *tlsKey,
		SessionIdle:        *sessionIdle,
		SessionMax:         *sessionMax,
	})
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
	if len(resumed) == 0 {
		// Runs made by assay run are indexed for search now, not at the
		// first search of each (the last of resumed runs to end does it).
		if err := tally.Of(db).CatchUpIndex(ctx); err != nil {
			logger.Warn(err.Error())
		}
	}
	runs.Adopt(leaseCheck)
	// What killed backups left: their copies are as large as the database.
	dirs := []string{*backupDir}
	if !store.IsPostgres(*dbPath) {
		dirs = append(dirs, filepath.Dir(*dbPath))
	}
	for _, dir := range dirs {
		if removed := outfile.Clean(dir, "backup"); len(removed) > 0 {
			logger.Info("removed the unfinished copies of backups that were stopped", "folder", dir, "files", removed)
		}
	}
	if *backupEvery > 0 {
		bctx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			backupSchedule(bctx, db, *backupDir, *backupEvery, *backupKeep, logger)
		}()
		defer func() { stop(); <-done }() // before the database closes
	}
	url := serveURL(*addr, ln.Addr())
	if *tlsCert != "" {
		url = "https" + strings.TrimPrefix(url, "http")
	}
	// Kept before anything is printed: whoever reads the banner may stop
	// the server at once.
	base := strings.Fields(url)[0]
	if err := db.NoteServerAddress(ctx, base); err != nil {
		return err
	}
	code := ""
	if generated {
		// A one-time code, not the token: the address stays in browser
		// history and scrollback, where a token would keep working.
		if code, err = db.CreateSigninCode(ctx, web.OwnerName, store.RoleOwner); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "assay %s serving %s (database %s)\n", version, url, store.Redacted(*dbPath))
	if *allowCommands {
		fmt.Fprintln(stdout, "the run form may start command agents (--allow-command-agents)")
	}
	if pageSize < store.PageSize {
		fmt.Fprintf(stdout, "the database was made with %d-byte pages by an earlier assay; searches of large runs take a third less time with %d-byte ones, which a copy made by `assay backup` has: restore it as README's Backups says\n", pageSize, store.PageSize)
	}
	if db.Postgres() && !db.Trigrams() {
		fmt.Fprintln(stdout, "the database has no trigram index of the responses (the pg_trgm extension could not be created as it was set up): searches of a run's responses read every one; as a role that may, run CREATE EXTENSION IF NOT EXISTS pg_trgm; CREATE INDEX results_response_trigrams ON results USING gin (response gin_trgm_ops); and start the server again")
	}
	if len(resumed) > 0 {
		fmt.Fprintf(stdout, "resumed unfinished runs %v\n", resumed)
	}
	switch {
	case generated:
		fmt.Fprintf(stdout, "sign in: %s/login?code=%s\n", base, code)
		fmt.Fprintln(stdout, "  (the address signs in once, within 15 minutes; assay token login-url prints another)")
	case *noAuth:
		logger.Warn("--no-auth: the server asks no token; every user and program of this machine may use it as an owner and start programs")
	}
	// Stop in order: the HTTP server, its background work, then the runs
	// (left resumable), then the database.
	err = srv.ListenAndServe(ctx, ln)
	closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if cerr := srv.Close(closeCtx); cerr != nil && err == nil {
		err = cerr
	}
	if cerr := runs.Close(closeCtx); cerr != nil && err == nil {
		err = cerr
	}
	logger.Info("stopped")
	return err
}

// serveURL is the address to open in a browser: the one asked for, with the
// port the listener got (for :0). A server on every interface is reached
// through loopback here.
func serveURL(asked string, got net.Addr) string {
	host, _, err := net.SplitHostPort(asked)
	_, port, perr := net.SplitHostPort(got.String())
	if err != nil || perr != nil {
		return "http://" + got.String()
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		return fmt.Sprintf("http://127.0.0.1:%s (every interface, port %s)", port, port)
	}
	return "http://" + net.JoinHostPort(host, port)
}
