package web

import (
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"assay"
)

// statusOf maps a domain error code to an HTTP status: the one place that does.
func statusOf(code string) int {
	switch code {
	case assay.EINVALID:
		return http.StatusUnprocessableEntity
	case assay.ENOTFOUND:
		return http.StatusNotFound
	case assay.ECONFLICT:
		return http.StatusConflict
	case assay.ETOOLARGE:
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
		code := assay.ErrorCode(err)
		status, msg = statusOf(code), assay.ErrorMessage(err)
		if code == assay.ENOTFOUND && msg == assay.ErrNotFound.Message {
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
