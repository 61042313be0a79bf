package web

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
)

// browserCookie names the random id of one browser's session. A CSRF token is
// a MAC of it under the database's key, so a token is good in that browser
// only, and a page that can set cookies for this host (another port of
// 127.0.0.1) cannot make a pair that passes.
const browserCookie = "assay_browser"

// csrf protects every state-changing request with a token bound to the
// browser's session. It lets through, without a token, only a request with
// this server's valid Bearer token, and, on a server without a token, a
// request that carries nothing a browser sends (no cookie, no Origin, no
// Sec-Fetch-Site): a script of the user's own, which the token could not stop.
func (s *Server) csrf(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		id, fresh := s.browserID(c)
		token := s.csrfToken(id)
		c.Set("csrf", token)
		r := c.Request()
		u := userOf(c)
		if safeMethod(r.Method) || (u != nil && u.Bearer) || (u != nil && u.Open && apiScript(r)) {
			return next(c)
		}
		got := r.Header.Get("X-CSRF-Token")
		if got == "" {
			var err error
			if got, err = s.formToken(c); err != nil {
				return err
			}
		}
		if fresh || !equal(got, token) {
			return echo.NewHTTPError(http.StatusForbidden, "This form has expired or did not come from this site. Reload the page and try again.")
		}
		return next(c)
	}
}

// browserID returns the browser's session id, setting a new one when it has none.
func (s *Server) browserID(c echo.Context) (id string, fresh bool) {
	if ck, err := c.Cookie(browserCookie); err == nil && len(ck.Value) == 43 {
		return ck.Value, false
	}
	b := make([]byte, 32)
	rand.Read(b)
	id = base64.RawURLEncoding.EncodeToString(b)
	c.SetCookie(&http.Cookie{
		Name:     browserCookie,
		Value:    id,
		Path:     "/",
		HttpOnly: true,
		SameSite: http.SameSiteLaxMode,
		Secure:   c.Scheme() == "https",
	})
	return id, true
}

func (s *Server) csrfToken(browserID string) string {
	mac := hmac.New(sha256.New, s.csrfKey)
	mac.Write([]byte("csrf\x00" + browserID))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// apiScript reports whether a request is a call of the JSON API that carries
// none of what a browser sends with a form or a fetch.
func apiScript(r *http.Request) bool {
	return strings.HasPrefix(r.URL.Path, "/api/") &&
		r.Header.Get("Cookie") == "" && r.Header.Get("Origin") == "" && r.Header.Get("Sec-Fetch-Site") == ""
}

// formToken reads the _csrf field of a form. A body over the size limit
// cannot be read, and is refused as too large.
func (s *Server) formToken(c echo.Context) (string, error) {
	r := c.Request()
	var err error
	if strings.HasPrefix(r.Header.Get(echo.HeaderContentType), echo.MIMEMultipartForm) {
		err = r.ParseMultipartForm(multipartMemory)
	} else {
		err = r.ParseForm()
	}
	var maxErr *http.MaxBytesError
	if errors.As(err, &maxErr) {
		return "", tooLarge(s.cfg.MaxUpload)
	}
	return r.FormValue("_csrf"), nil
}
