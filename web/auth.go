package web

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"assay/templates"
)

const sessionCookie = "assay_session"

// sessionValue is what the session cookie holds: a digest of the token, not the token.
func (s *Server) sessionValue() string {
	sum := sha256.Sum256([]byte("assay-session:" + s.cfg.Token))
	return hex.EncodeToString(sum[:])
}

func equal(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// public reports whether a path is reachable without the access token.
func public(path string) bool {
	return strings.HasPrefix(path, "/static/") || path == "/login" || path == "/healthz" || strings.HasPrefix(path, "/r/")
}

// requireToken lets a request through when the server has no token, or the request
// carries it as a Bearer header or as the session cookie set by the login form.
func (s *Server) requireToken(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if s.cfg.Token == "" || public(c.Request().URL.Path) {
			return next(c)
		}
		if s.validBearer(c) {
			return next(c)
		}
		if ck, err := c.Cookie(sessionCookie); err == nil && equal(ck.Value, s.sessionValue()) {
			return next(c)
		}
		if wantsJSON(c) {
			return echo.NewHTTPError(http.StatusUnauthorized, "This server needs its access token: send Authorization: Bearer <token>.")
		}
		return c.Redirect(http.StatusSeeOther, "/login?next="+url.QueryEscape(c.Request().URL.RequestURI()))
	}
}

// loginPage handles GET /login.
func (s *Server) loginPage(c echo.Context) error {
	return render(c, http.StatusOK, templates.Login(s.page(c, "Sign in", ""), localPath(c.QueryParam("next")), ""))
}

// login handles POST /login.
func (s *Server) login(c echo.Context) error {
	next := localPath(c.FormValue("next"))
	if s.cfg.Token == "" {
		return redirect(c, next)
	}
	if !equal(c.FormValue("token"), s.cfg.Token) {
		return render(c, http.StatusUnauthorized, templates.Login(s.page(c, "Sign in", ""), next, "That token is not right."))
	}
	c.SetCookie(&http.Cookie{
		Name:     sessionCookie,
		Value:    s.sessionValue(),
		Path:     "/",
		HttpOnly: true,
		SameSite: http.SameSiteLaxMode,
		Secure:   c.Scheme() == "https",
	})
	return redirect(c, next)
}

// logout handles POST /logout.
func (s *Server) logout(c echo.Context) error {
	c.SetCookie(&http.Cookie{Name: sessionCookie, Path: "/", MaxAge: -1})
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
