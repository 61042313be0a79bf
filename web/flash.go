package web

import (
	"encoding/base64"
	"net/http"
	"strings"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"assay/templates"
)

const flashCookie = "assay_flash"

// setFlash leaves a one-line message for the next page the browser loads.
func setFlash(c echo.Context, kind, message string) { setFlashCopy(c, kind, message, "") }

// setFlashCopy leaves a message with a value to copy: a link shown this once.
func setFlashCopy(c echo.Context, kind, message, copy string) {
	v := base64.RawURLEncoding.EncodeToString([]byte(kind + "|" + message + "\x00" + copy))
	c.SetCookie(&http.Cookie{
		Name:     flashCookie,
		Value:    v,
		Path:     "/",
		HttpOnly: true,
		SameSite: http.SameSiteLaxMode,
	})
}

func decodeFlash(v string) templates.Flash {
	b, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil {
		return templates.Flash{}
	}
	kind, msg, _ := strings.Cut(string(b), "|")
	msg, copy, _ := strings.Cut(msg, "\x00")
	switch kind {
	case "ok", "error", "info", "warn":
	default:
		kind = "info"
	}
	return templates.Flash{Kind: kind, Message: msg, Copy: copy}
}

// redirect answers a form post with 303 See Other.
func redirect(c echo.Context, url string) error {
	return c.Redirect(http.StatusSeeOther, url)
}

func errorPage(s *Server, c echo.Context, status int, msg string) templ.Component {
	p := s.page(c, http.StatusText(status), "")
	if path := c.Request().URL.Path; strings.HasPrefix(path, "/r/") || strings.HasPrefix(path, "/rv/") {
		p = s.barePage(c, http.StatusText(status)) // a link's reader learns nothing of the server
	}
	return templates.ErrorPage(p, status, msg)
}
