// Package web serves assay's pages and JSON API.
package web

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"assay/readmodel"
	"assay/report"
	"assay/runner"
	"assay/store"
	"assay/templates"
)

// DefaultMaxUpload is the default size limit of an uploaded dataset.
const DefaultMaxUpload = 64 << 20

// Config is how the server is set up.
type Config struct {
	Addr  string // listen address, e.g. 127.0.0.1:8080
	Token string // access token; required unless Addr is loopback
	// TokenGenerated says Token was made for this start (assay serve with
	// neither --token nor --no-auth): the browsers signed in with an earlier
	// start's stay signed in.
	TokenGenerated bool
	MaxUpload      int64 // bytes; 0 = DefaultMaxUpload
	Logger         *slog.Logger
	Runner         *runner.Manager // executes runs; nil: a manager of the server's own
	// AllowedHosts are host names, besides the loopback ones, that a server
	// without a token answers to.
	AllowedHosts []string
	// AllowCommandAgents lets the run form start a command agent: a program
	// of the user's choice, run on this machine.
	AllowCommandAgents bool
	// TLSCert and TLSKey are PEM files: with both, the server speaks HTTPS
	// only, and tells browsers to keep to it (HSTS).
	TLSCert, TLSKey string
	// BehindProxy takes a client's address from the X-Forwarded-For header
	// that a reverse proxy on this machine or a private network sets;
	// otherwise the connection's address is the client's, and headers that
	// claim otherwise are ignored.
	BehindProxy bool
	// SessionIdle and SessionMax end a browser's session after that long
	// without a request, and that long after sign-in; 0 = the defaults.
	SessionIdle, SessionMax time.Duration
	// ReplayWait is how long the Routing page waits for a replay before it
	// says the replay is under way and fetches itself again until it is
	// done: 0 = two seconds, below 0 = not at all.
	ReplayWait time.Duration
	// replayAbandon stops a replay nobody waited for this long (0: replayAbandoned).
	replayAbandon time.Duration
}

// Server is assay's HTTP server.
type Server struct {
	db        *store.DB
	cfg       Config
	log       *slog.Logger
	echo      *echo.Echo
	runner    *runner.Manager
	model     *readmodel.Model                        // what is derived from the record, kept for the pages
	replays   readmodel.FIFO[string, *report.Routing] // routing replays, by run and settings
	base      context.Context                         // the server's life: ends at Close
	stop      context.CancelFunc
	work      sync.WaitGroup // what runs in the background (background)
	replaying replayJobs     // routing replays under way
	csrfKey   []byte
	assets    *assets // the embedded CSS and JavaScript (static.go)

	hasTokens tokensCache
	logins    *loginLimiter
}

// New builds a server over db. It refuses a non-loopback address without a token.
func New(db *store.DB, cfg Config) (*Server, error) {
	cfg.fillDefaults()
	if err := cfg.check(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if cfg.Addr != "" && cfg.Token == "" && !IsLoopback(cfg.Addr) {
		if has, err := db.HasTokens(ctx); err != nil || !has {
			return nil, fmt.Errorf("listening on %s needs an access token: pass --token (or set ASSAY_TOKEN), or create a named one with  assay token create --name YOU", cfg.Addr)
		}
	}
	if cfg.Runner == nil {
		cfg.Runner = runner.New(db, runner.Options{Logger: cfg.Logger})
	}
	key, err := db.ServerKey(ctx, "csrf")
	if err != nil {
		return nil, err
	}
	s := &Server{
		db:      db,
		cfg:     cfg,
		log:     cfg.Logger,
		echo:    echo.New(),
		runner:  cfg.Runner,
		model:   readmodel.NewModel(db, cfg.Logger),
		csrfKey: key,
		logins:  newLoginLimiter(),
	}
	s.base, s.stop = context.WithCancel(context.Background())
	s.echo.HideBanner, s.echo.HidePort = true, true
	s.echo.IPExtractor = echo.ExtractIPDirect()
	if cfg.BehindProxy {
		s.echo.IPExtractor = echo.ExtractIPFromXFFHeader()
	}
	s.echo.HTTPErrorHandler = s.handleError
	if s.assets, err = staticAssets(); err != nil {
		return nil, fmt.Errorf("static assets: %w", err)
	}
	s.routes()
	return s, nil
}

// fillDefaults gives the settings left unset their defaults.
func (cfg *Config) fillDefaults() {
	if cfg.MaxUpload <= 0 {
		cfg.MaxUpload = DefaultMaxUpload
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.SessionIdle <= 0 {
		cfg.SessionIdle = DefaultSessionIdle
	}
	if cfg.SessionMax <= 0 {
		cfg.SessionMax = DefaultSessionMax
	}
}

// check refuses HTTPS without both its files, or with files that do not
// load, and an access token too short.
func (cfg *Config) check() error {
	if (cfg.TLSCert == "") != (cfg.TLSKey == "") {
		return fmt.Errorf("HTTPS needs both --tls-cert and --tls-key")
	}
	if cfg.TLSCert != "" {
		if _, err := tls.LoadX509KeyPair(cfg.TLSCert, cfg.TLSKey); err != nil {
			return fmt.Errorf("HTTPS: %w", err)
		}
	}
	if n := len(cfg.Token); n > 0 && n < MinTokenLength {
		return fmt.Errorf("the access token is %d characters; use at least %d: create a named one with  assay token create --name YOU, or make one with  openssl rand -hex 16", n, MinTokenLength)
	}
	return nil
}

// background runs f in the background under the server's life: Close
// cancels the context f is given and waits for f to return. Work started
// by a request and kept past it (a samples table made ahead, a routing
// replay) runs so.
func (s *Server) background(f func(ctx context.Context)) {
	s.work.Go(func() { f(s.base) })
}

// Close stops the server's background work (routing replays) and its read
// model's (samples tables made ahead, memory given back), and waits for
// them, or for ctx. The HTTP server is stopped by ListenAndServe; runs by
// their Manager.
func (s *Server) Close(ctx context.Context) error {
	s.stop()
	done := make(chan struct{})
	go func() { s.work.Wait(); close(done) }()
	err := s.model.Close(ctx)
	select {
	case <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("close: background work still running: %w", ctx.Err())
	}
}

// IsLoopback reports whether addr (host:port) only listens on the loopback interface.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Routes lists the server's routes as "METHOD /path/:param", for tests
// that go through every one of them.
func (s *Server) Routes() []string {
	var out []string
	for _, r := range s.echo.Routes() {
		out = append(out, r.Method+" "+r.Path)
	}
	return out
}

// Handler returns the server's http.Handler, for tests and for embedding.
func (s *Server) Handler() http.Handler { return s.echo }

// ListenAndServe serves until ctx is done, then shuts down: requests under
// way get shutdownGrace to end; then they are cut short (their contexts,
// made from the server's life, are cancelled: a large export stops at its
// next row) and their connections closed.
func (s *Server) ListenAndServe(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{Handler: s.echo, ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return s.base }}
	errc := make(chan error, 1)
	go func() {
		if s.cfg.TLSCert != "" {
			errc <- srv.ServeTLS(ln, s.cfg.TLSCert, s.cfg.TLSKey)
			return
		}
		errc <- srv.Serve(ln)
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	grace, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(grace); err != nil {
		s.stop()
		late, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
		defer cancel()
		if srv.Shutdown(late) != nil {
			srv.Close()
		}
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// shutdownGrace is how long requests under way are given at shutdown,
// twice: to end, then to notice they were cut short.
const shutdownGrace = 1500 * time.Millisecond

// render writes a templ component with a status code.
func render(c echo.Context, status int, component templ.Component) error {
	c.Response().Header().Set(echo.HeaderContentType, echo.MIMETextHTMLCharsetUTF8)
	c.Response().WriteHeader(status)
	return component.Render(c.Request().Context(), c.Response().Writer)
}

// page returns the layout data for a page.
// barePage is a page for someone not signed in, or reached through a link:
// the sign-in page, and errors under a share or review link. It shows no
// navigation: its reader may not use the server's pages.
func (s *Server) barePage(c echo.Context, title string) templates.Page {
	p := s.page(c, title, "")
	p.Auth, p.Bare = false, true
	return p
}

func (s *Server) page(c echo.Context, title, nav string) templates.Page {
	p := templates.Page{Title: title, Nav: nav}
	if u := userOf(c); u != nil && !u.Open {
		p.Auth, p.User, p.Role = true, u.Name, string(u.Role)
	}
	if tok, ok := c.Get("csrf").(string); ok {
		p.CSRF = tok
	}
	if f, err := c.Cookie(flashCookie); err == nil && f.Value != "" {
		p.Flash = decodeFlash(f.Value)
		c.SetCookie(&http.Cookie{Name: flashCookie, Path: "/", MaxAge: -1})
	}
	return p
}
