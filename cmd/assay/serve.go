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
	o, err := parseServeArgs(args, stderr)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	db, err := tally.Open(ctx, o.dbPath)
	if err != nil {
		return err
	}
	defer db.Close()
	runs := runner.New(db, runner.Options{Logger: logger, Program: "assay serve", IndexWhenIdle: true})
	srv, err := web.New(db, o.webConfig(logger, runs))
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	resumed, err := takeUpRuns(ctx, db, runs, logger)
	if err != nil {
		return err
	}
	o.cleanBackups(logger)
	if o.backupEvery > 0 {
		bctx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			backupSchedule(bctx, db, o.backupDir, o.backupEvery, o.backupKeep, logger)
		}()
		defer func() { stop(); <-done }() // before the database closes
	}
	if err := o.banner(ctx, db, ln.Addr(), resumed, stdout, logger); err != nil {
		return err
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

// serveArgs are assay serve's flags, checked.
type serveArgs struct {
	addr, dbPath, token, tlsCert, tlsKey, backupDir string
	noAuth, allowCommands, behindProxy, generated   bool
	maxUpload                                       int64
	hosts                                           []string
	backupEvery, sessionIdle, sessionMax            time.Duration
	backupKeep                                      int
}

func parseServeArgs(args []string, stderr io.Writer) (*serveArgs, error) {
	o := &serveArgs{}
	fs := newFlags("serve", stderr)
	fs.StringVar(&o.addr, "addr", "127.0.0.1:8080", "address to listen on; anything but loopback needs --token")
	dbPath := dbFlag(fs)
	fs.StringVar(&o.token, "token", envOr("ASSAY_TOKEN", ""), "the owner's access token, at least 16 characters (default $ASSAY_TOKEN, else one made at each start, and a one-time sign-in address printed); assay token create makes named ones")
	fs.BoolVar(&o.noAuth, "no-auth", false, "ask no token of anyone who reaches the server: every local user and program is an owner and may start programs (loopback only)")
	fs.Int64Var(&o.maxUpload, "max-upload", web.DefaultMaxUpload>>20, "largest dataset upload, in MiB")
	allowedHosts := fs.String("allowed-hosts", "", "host names besides localhost that a server without --token answers to, comma-separated")
	fs.BoolVar(&o.allowCommands, "allow-command-agents", false, "let the run form start command agents (programs run on this machine)")
	fs.StringVar(&o.tlsCert, "tls-cert", "", "serve HTTPS with this PEM certificate (and --tls-key)")
	fs.StringVar(&o.tlsKey, "tls-key", "", "the certificate's PEM private key")
	fs.DurationVar(&o.backupEvery, "backup-every", 0, "back the database up this often while serving (e.g. 24h), into --backup-dir")
	fs.StringVar(&o.backupDir, "backup-dir", "", "where scheduled backups go, as assay-YYYYMMDD-HHMMSS.mmm.db")
	fs.IntVar(&o.backupKeep, "backup-keep", 7, "how many scheduled backups to keep")
	fs.BoolVar(&o.behindProxy, "behind-proxy", false, "take client addresses (for the sign-in limit and logs) from the X-Forwarded-For of a proxy on a private network")
	fs.DurationVar(&o.sessionIdle, "session-idle", web.DefaultSessionIdle, "a browser's session ends after this long without a request")
	fs.DurationVar(&o.sessionMax, "session-max", web.DefaultSessionMax, "and this long after sign-in, whatever happens")
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	o.dbPath = *dbPath
	var err error
	if o.hosts, err = web.AllowedHosts(*allowedHosts); err != nil {
		return nil, &exitError{code: 2, err: err}
	}
	if err := o.checkBackups(); err != nil {
		return nil, &exitError{code: 2, err: err}
	}
	return o, o.checkAccess()
}

// checkBackups checks the scheduled backups' flags.
func (o *serveArgs) checkBackups() error {
	switch {
	case o.backupEvery <= 0:
		return nil
	case store.IsPostgres(o.dbPath):
		return fmt.Errorf("serve: --backup-every copies a SQLite file; %s is a Postgres database: back it up with Postgres's own tools (pg_dump, or the server's continuous archiving)", store.Redacted(o.dbPath))
	}
	if st, err := os.Stat(o.backupDir); o.backupDir == "" || err != nil || !st.IsDir() {
		return fmt.Errorf("serve: --backup-every needs --backup-dir naming a folder that exists")
	}
	if o.backupKeep < 1 {
		return fmt.Errorf("serve: --backup-keep must be at least 1")
	}
	return nil
}

// checkAccess checks who may reach the server; without a token of the
// user's, one is made.
func (o *serveArgs) checkAccess() error {
	switch {
	case o.noAuth && o.token != "":
		return &exitError{code: 2, err: fmt.Errorf("serve: --no-auth and --token (or ASSAY_TOKEN) contradict each other: pass one")}
	case o.noAuth && !web.IsLoopback(o.addr):
		return &exitError{code: 2, err: fmt.Errorf("serve: --no-auth is for a server on loopback only, not %s: anyone who reaches it could start programs as you", o.addr)}
	case !o.noAuth && o.token == "":
		// As Jupyter does: a server nobody configured is not open to the
		// machine's other users and programs.
		o.token, o.generated = rand.Text(), true
	}
	return nil
}

func (o *serveArgs) webConfig(logger *slog.Logger, runs *runner.Manager) web.Config {
	return web.Config{Addr: o.addr, Token: o.token, TokenGenerated: o.generated, MaxUpload: o.maxUpload << 20, Logger: logger,
		Runner: runs, AllowedHosts: o.hosts, AllowCommandAgents: o.allowCommands, BehindProxy: o.behindProxy,
		TLSCert: o.tlsCert, TLSKey: o.tlsKey, SessionIdle: o.sessionIdle, SessionMax: o.sessionMax}
}

// takeUpRuns resumes the runs this database left unfinished and adopts
// those no live process holds from now on; the ids of those resumed.
func takeUpRuns(ctx context.Context, db *store.DB, runs *runner.Manager, logger *slog.Logger) ([]int64, error) {
	resumed, err := runs.ResumeUnfinished(ctx)
	if err != nil {
		return nil, err
	}
	if len(resumed) == 0 {
		// Runs made by assay run are indexed for search now, not at the
		// first search of each (the last of resumed runs to end does it).
		if err := tally.Of(db).CatchUpIndex(ctx); err != nil {
			logger.Warn(err.Error())
		}
	}
	runs.Adopt(leaseCheck)
	return resumed, nil
}

// cleanBackups removes what killed backups left: their copies are as large
// as the database.
func (o *serveArgs) cleanBackups(logger *slog.Logger) {
	dirs := []string{o.backupDir}
	if !store.IsPostgres(o.dbPath) {
		dirs = append(dirs, filepath.Dir(o.dbPath))
	}
	for _, dir := range dirs {
		if removed := outfile.Clean(dir, "backup"); len(removed) > 0 {
			logger.Info("removed the unfinished copies of backups that were stopped", "folder", dir, "files", removed)
		}
	}
}

// banner says where the server is and what it found, and how to sign in.
// The address and the sign-in code are kept before anything is printed:
// whoever reads the banner may stop the server at once.
func (o *serveArgs) banner(ctx context.Context, db *store.DB, got net.Addr, resumed []int64, stdout io.Writer, logger *slog.Logger) error {
	url := serveURL(o.addr, got)
	if o.tlsCert != "" {
		url = "https" + strings.TrimPrefix(url, "http")
	}
	base := strings.Fields(url)[0]
	if err := db.NoteServerAddress(ctx, base); err != nil {
		return err
	}
	code := ""
	if o.generated {
		// A one-time code, not the token: the address stays in browser
		// history and scrollback, where a token would keep working.
		var err error
		if code, err = db.CreateSigninCode(ctx, web.OwnerName, store.RoleOwner); err != nil {
			return err
		}
	}
	pageSize, err := db.FilePageSize(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "assay %s serving %s (database %s)\n", version, url, store.Redacted(o.dbPath))
	o.notes(db, pageSize, stdout)
	if len(resumed) > 0 {
		fmt.Fprintf(stdout, "resumed unfinished runs %v\n", resumed)
	}
	switch {
	case o.generated:
		fmt.Fprintf(stdout, "sign in: %s/login?code=%s\n", base, code)
		fmt.Fprintln(stdout, "  (the address signs in once, within 15 minutes; assay token login-url prints another)")
	case o.noAuth:
		logger.Warn("--no-auth: the server asks no token; every user and program of this machine may use it as an owner and start programs")
	}
	return nil
}

// notes says what the server's operator should know of its set-up.
func (o *serveArgs) notes(db *store.DB, pageSize int, stdout io.Writer) {
	if o.allowCommands {
		fmt.Fprintln(stdout, "the run form may start command agents (--allow-command-agents)")
	}
	if pageSize < store.PageSize {
		fmt.Fprintf(stdout, "the database was made with %d-byte pages by an earlier assay; searches of large runs take a third less time with %d-byte ones, which a copy made by `assay backup` has: restore it as docs/guide/access.md's Backups says\n", pageSize, store.PageSize)
	}
	if db.Postgres() && !db.Trigrams() {
		fmt.Fprintln(stdout, "the database has no trigram index of the responses (the pg_trgm extension could not be created as it was set up): searches of a run's responses read every one; as a role that may, run CREATE EXTENSION IF NOT EXISTS pg_trgm; CREATE INDEX results_response_trigrams ON results USING gin (response gin_trgm_ops); and start the server again")
	}
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
