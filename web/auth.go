package web

import (
	"context"
	"crypto/subtle"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"assay"
	"assay/store"
	"assay/templates"
)

const sessionCookie = "assay_session"

// Session lifetimes unless the server is told otherwise.
const (
	DefaultSessionIdle = 14 * 24 * time.Hour
	DefaultSessionMax  = 90 * 24 * time.Hour
)

// MinTokenLength is the shortest --token a server accepts.
const MinTokenLength = 16

// OwnerName is the name of whoever signs in with the server's own --token.
const OwnerName = "owner"

func equal(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// user is who makes a request and what they may do.
type user struct {
	Name   string
	Role   store.Role
	Bearer bool // signed in by an Authorization: Bearer token (an API client)
	Open   bool // the server asks for no token: everyone is an owner
	token  *int64
}

// userOf is the request's user; nil on a public path of a server with tokens.
func userOf(c echo.Context) *user {
	u, _ := c.Get("user").(*user)
	return u
}

// public reports whether a path is reachable without a token.
func public(path string) bool {
	return strings.HasPrefix(path, "/static/") || path == "/login" || path == "/healthz" || path == "/api/openapi.json" || strings.HasPrefix(path, "/r/") ||
		strings.HasPrefix(path, "/rv/")
}

// tokensCache remembers for a moment whether the database holds tokens, so
// that every request need not ask.
type tokensCache struct {
	mu    sync.Mutex
	at    time.Time
	value bool
}

// authRequired reports whether visitors must sign in: the server has its
// own --token, or the database holds a named token (checked at most every
// two seconds).
func (s *Server) authRequired(ctx context.Context) bool {
	if s.cfg.Token != "" {
		return true
	}
	c := &s.hasTokens
	c.mu.Lock()
	defer c.mu.Unlock()
	if time.Since(c.at) > 2*time.Second {
		has, err := s.db.HasTokens(ctx)
		if err != nil {
			return true // unsure: ask
		}
		c.value, c.at = has, time.Now()
	}
	return c.value
}

// forgetTokens makes the next request look at the tokens again.
func (s *Server) forgetTokens() {
	s.hasTokens.mu.Lock()
	s.hasTokens.at = time.Time{}
	s.hasTokens.mu.Unlock()
}

// authenticate finds the request's user — by Bearer token or session
// cookie on a server with tokens — and checks that their role allows an
// unsafe request, in this one place: owners may do everything, reviewers
// may also record review verdicts, viewers may only read.
func (s *Server) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		ctx := r.Context()
		var u *user
		if l := s.reviewLinkBearer(c); l != nil {
			c.Set("reviewLink", l)
			c.Set("user", &user{Name: l.Name, Role: store.RoleReviewer, Bearer: true})
			c.SetRequest(r.WithContext(store.WithActor(ctx, l.Name)))
			return next(c)
		}
		switch {
		case !s.authRequired(ctx):
			u = &user{Role: store.RoleOwner, Open: true}
		case public(r.URL.Path):
			return next(c)
		default:
			var err error
			if u, err = s.signedIn(c); err != nil {
				return err
			}
		}
		if u == nil {
			if wantsJSON(c) {
				return echo.NewHTTPError(http.StatusUnauthorized, "This server needs an access token: send Authorization: Bearer <token>.")
			}
			return c.Redirect(http.StatusSeeOther, "/login?next="+url.QueryEscape(r.URL.RequestURI()))
		}
		if need := minRole(c.Path()); !safeMethod(r.Method) && !u.Role.Allows(need) {
			needs := "an owner"
			if need == store.RoleReviewer {
				needs = "a reviewer or an owner"
			}
			return echo.NewHTTPError(http.StatusForbidden, "You are signed in as "+u.Name+", a "+string(u.Role)+
				": this needs "+needs+". Ask an owner to do it, or to give you that role.")
		}
		c.Set("user", u)
		c.SetRequest(r.WithContext(store.WithActor(ctx, u.Name)))
		return next(c)
	}
}

// reviewerRoutes are the unsafe routes a reviewer may use besides an
// owner; every other unsafe route needs an owner.
var reviewerRoutes = map[string]bool{"/runs/:id/reviews": true, "/api/runs/:id/reviews": true}

// reviewLinkBearer is the review link an API call to its own run's
// reviews carries as its Bearer token; nil for anything else.
func (s *Server) reviewLinkBearer(c echo.Context) *store.ReviewLink {
	bearer, ok := strings.CutPrefix(c.Request().Header.Get("Authorization"), "Bearer ")
	if !ok || bearer == "" || c.Path() != "/api/runs/:id/reviews" {
		return nil
	}
	l, err := s.db.ReviewLinkByToken(c.Request().Context(), bearer)
	if err != nil || c.Param("id") != strconv.FormatInt(l.RunID, 10) {
		return nil
	}
	return l
}

// minRole is the least role that may send an unsafe request to route.
func minRole(route string) store.Role {
	switch {
	case route == "/logout":
		return store.RoleViewer
	case reviewerRoutes[route]:
		return store.RoleReviewer
	}
	return store.RoleOwner
}

// signedIn is the user of a Bearer token or a live session; nil for none.
// A Bearer token that is not valid is refused outright.
func (s *Server) signedIn(c echo.Context) (*user, error) {
	ctx := c.Request().Context()
	if bearer, ok := strings.CutPrefix(c.Request().Header.Get("Authorization"), "Bearer "); ok {
		u, err := s.tokenUser(ctx, bearer)
		if err != nil {
			if err := s.guessed(c, "access token"); err != nil {
				return nil, err
			}
			return nil, echo.NewHTTPError(http.StatusUnauthorized, "That access token is not valid: it may have been revoked.")
		}
		u.Bearer = true
		return u, nil
	}
	return s.sessionUser(c)
}

// sessionUser is the user of the browser's live session; nil for none.
func (s *Server) sessionUser(c echo.Context) (*user, error) {
	ck, err := c.Cookie(sessionCookie)
	if err != nil || ck.Value == "" {
		return nil, nil
	}
	sess, err := s.db.SessionByID(c.Request().Context(), ck.Value, s.ownTokenHash(), s.sessionLimits())
	if err != nil {
		if !errors.Is(err, assay.ErrNotFound) {
			return nil, err
		}
		return nil, nil
	}
	return &user{Name: sess.Name, Role: sess.Role}, nil
}

// guessed counts and logs a secret that matched nothing — a token at
// sign-in or as Bearer, a share or review link: each path that takes one
// counts toward the same limit. Once an address has failed too often it is
// answered 429 with Retry-After for each further failure. Only failures are
// limited: a secret that is right, or a session, always gets in, so that a
// page elsewhere cannot lock the people who hold a key out by guessing from
// their address (everything on loopback is one address).
func (s *Server) guessed(c echo.Context, what string) error {
	ip := c.RealIP()
	wait := s.logins.wait(ip)
	s.logins.fail(ip)
	s.log.Warn("unknown "+what, "client", ip, "path", c.Request().URL.Path)
	if wait <= 0 {
		return nil
	}
	c.Response().Header().Set("Retry-After", retryAfterSeconds(wait))
	return echo.NewHTTPError(http.StatusTooManyRequests,
		"Too many wrong tokens or links from this address: try again in "+wait.Round(time.Second).String()+".")
}

// tokenUser is the user a token's secret stands for: the server's own
// --token, or a named token.
func (s *Server) tokenUser(ctx context.Context, secret string) (*user, error) {
	if s.cfg.Token != "" && equal(secret, s.cfg.Token) {
		return &user{Name: OwnerName, Role: store.RoleOwner}, nil
	}
	if secret == "" {
		return nil, assay.ErrNotFound
	}
	t, err := s.db.TokenBySecret(ctx, secret)
	if err != nil {
		return nil, err
	}
	return &user{Name: t.Name, Role: t.Role, token: &t.ID}, nil
}

// generatedOwner is what the sessions signed in with a generated token keep
// of it: each start makes a new token, and the browsers signed in stay so.
const generatedOwner = "generated at start"

func (s *Server) ownTokenHash() string {
	switch {
	case s.cfg.Token == "":
		return ""
	case s.cfg.TokenGenerated:
		return generatedOwner
	}
	return store.HashSecret(s.cfg.Token)
}

// sessionTokenHash is what a session keeps of the token it was signed in with.
func (s *Server) sessionTokenHash(u *user, secret string) string {
	if u.token == nil && s.cfg.TokenGenerated {
		return generatedOwner
	}
	return store.HashSecret(secret)
}

func (s *Server) sessionLimits() store.SessionLimits {
	return store.SessionLimits{Idle: s.cfg.SessionIdle, Max: s.cfg.SessionMax}
}

// loginPage handles GET /login. With ?code= (the one-time address assay
// serve and assay token login-url print) or ?token= it signs the browser in
// at once — unless the browser is signed in already: then it asks, since a
// page elsewhere could otherwise sign it in as someone else.
func (s *Server) loginPage(c echo.Context) error {
	next := localPath(c.QueryParam("next"))
	key := signInKey{code: c.QueryParam("code"), token: c.QueryParam("token")}
	if key.empty() {
		return render(c, http.StatusOK, templates.Login(s.barePage(c, "Sign in"), next, ""))
	}
	if s.authRequired(c.Request().Context()) {
		current, err := s.sessionUser(c)
		if err != nil {
			return err
		}
		if current != nil {
			return render(c, http.StatusOK, templates.LoginSwitch(s.barePage(c, "Sign in"), current.Name, next, key.code, key.token))
		}
	}
	return s.signIn(c, key, next)
}

// login handles POST /login: a token, or a one-time code, for a session.
func (s *Server) login(c echo.Context) error {
	return s.signIn(c, signInKey{code: c.FormValue("code"), token: c.FormValue("token")}, localPath(c.FormValue("next")))
}

// signInKey is what a browser signs in with: a one-time code, or a token.
type signInKey struct{ code, token string }

func (k signInKey) empty() bool { return k.code == "" && k.token == "" }

// signIn trades a token or a one-time code for a session and goes on to
// next; a wrong one counts toward the address's limit.
func (s *Server) signIn(c echo.Context, key signInKey, next string) error {
	ctx := c.Request().Context()
	if !s.authRequired(ctx) {
		return redirect(c, next)
	}
	u, tokenHash, err := s.keyUser(ctx, key)
	if err != nil {
		if !errors.Is(err, assay.ErrNotFound) {
			return err
		}
		if err := s.guessed(c, "token at sign-in"); err != nil {
			wait := c.Response().Header().Get("Retry-After")
			return render(c, http.StatusTooManyRequests, templates.Login(s.barePage(c, "Sign in"), next,
				"Too many attempts from this address: try again in "+wait+" s."))
		}
		msg := "That token is not right."
		if key.code != "" {
			msg = "That sign-in address is used or out of date: each signs in once, within 15 minutes. Run assay token login-url for a new one, or sign in with a token."
		}
		return render(c, http.StatusUnauthorized, templates.Login(s.barePage(c, "Sign in"), next, msg))
	}
	sess := &store.Session{Name: u.Name, Role: u.Role, TokenID: u.token}
	id, err := s.db.CreateSession(ctx, sess, tokenHash)
	if err != nil {
		return err
	}
	s.log.Info("signed in", "name", u.Name, "role", u.Role, "client", c.RealIP())
	c.SetCookie(&http.Cookie{
		Name:     sessionCookie,
		Value:    id,
		Path:     "/",
		MaxAge:   int(s.cfg.SessionMax / time.Second),
		HttpOnly: true,
		SameSite: http.SameSiteLaxMode,
		Secure:   c.Scheme() == "https",
	})
	return redirect(c, next)
}

// keyUser is who key signs in, and what the session keeps of the token it
// stands for: a code stands for the server's own token, whose sessions end
// when it changes. ErrNotFound for a key that is not right.
func (s *Server) keyUser(ctx context.Context, key signInKey) (*user, string, error) {
	if key.code != "" {
		code, err := s.db.UseSigninCode(ctx, key.code)
		if err != nil {
			return nil, "", err
		}
		return &user{Name: code.Name, Role: code.Role}, s.ownTokenHash(), nil
	}
	u, err := s.tokenUser(ctx, key.token)
	if err != nil {
		return nil, "", assay.ErrNotFound // as every failed look-up of a token is counted
	}
	return u, s.sessionTokenHash(u, key.token), nil
}

// logout handles POST /logout: the session ends on the server too.
func (s *Server) logout(c echo.Context) error {
	if ck, err := c.Cookie(sessionCookie); err == nil && ck.Value != "" {
		if err := s.db.EndSession(c.Request().Context(), ck.Value); err != nil {
			return err
		}
	}
	c.SetCookie(&http.Cookie{Name: sessionCookie, Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteLaxMode})
	return redirect(c, "/login")
}

// localPath returns next when it is a path on this server, else "/". A
// browser reads a backslash as a slash and drops tabs and newlines, so
// "/" + backslash + "evil.example", or "/", a tab and "/evil.example", would leave the site.
func localPath(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.ContainsRune(next, '\\') {
		return "/"
	}
	for _, r := range next {
		if r < 0x20 || r == 0x7f {
			return "/"
		}
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || !strings.HasPrefix(u.Path, "/") || strings.HasPrefix(u.Path, "//") {
		return "/"
	}
	return next
}
