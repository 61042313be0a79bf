package web

import (
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"assay/store"
)

// statusOf maps a domain error code to an HTTP status: the one place that does.
func statusOf(code string) int {
	switch code {
	case store.EINVALID:
		return http.StatusUnprocessableEntity
	case store.ENOTFOUND:
		return http.StatusNotFound
	case store.ECONFLICT:
		return http.StatusConflict
	case store.ETOOLARGE:
		return http.StatusRequestEntityTooLarge
	}
	return http.StatusInternalServerError
}

// handleError turns any handler error into a page or a JSON body with a safe message.
func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	status, msg := http.StatusInternalServerError, "Internal error."
	var he *echo.HTTPError
	if errors.As(err, &he) {
		status = he.Code
		if m, ok := he.Message.(string); ok {
			msg = m
		} else {
			msg = http.StatusText(status)
		}
	} else {
		code := store.ErrorCode(err)
		status, msg = statusOf(code), store.ErrorMessage(err)
		if code == store.ENOTFOUND && msg == store.ErrNotFound.Message {
			msg = "Not found."
		}
	}
	if status >= 500 {
		s.log.Error("request failed", "method", c.Request().Method, "path", c.Request().URL.Path, "err", err)
	}
	if wantsJSON(c) {
		_ = c.JSON(status, map[string]string{"error": msg})
		return
	}
	_ = render(c, status, errorPage(s, c, status, msg))
}

func wantsJSON(c echo.Context) bool {
	return strings.HasPrefix(c.Request().URL.Path, "/api/") ||
		strings.Contains(c.Request().Header.Get("Accept"), "application/json")
}
