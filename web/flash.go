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
func setFlash(c echo.Context, kind, message string) { setFlashAt(c, kind, message, "", "") }

// setFlashAt leaves a message with a value to copy, shown in the part of
// the next page whose id is place (where the page lands) instead of at its
// top: a link made there is copied there.
func setFlashAt(c echo.Context, kind, message, copy, place string) {
	v := base64.RawURLEncoding.EncodeToString([]byte(kind + "|" + message + "\x00" + copy + "\x00" + place))
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
	copy, place, _ := strings.Cut(copy, "\x00")
	switch kind {
	case "ok", "error", "info", "warn":
	default:
		kind = "info"
	}
	return templates.Flash{Kind: kind, Message: msg, Copy: copy, Place: place}
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
