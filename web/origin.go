package web

import (
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"
)

// checkHost refuses a request whose Host header names anything but this
// machine's loopback names, unless the server asks for tokens or the name
// was allowed with --allowed-hosts. A page on another site can point its own
// name at 127.0.0.1 (DNS rebinding) and then read and post to this server as
// if it were its own origin; the Host header is what gives it away.
func (s *Server) checkHost(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if s.authRequired(c.Request().Context()) {
			return next(c)
		}
		host := hostName(c.Request().Host)
		if loopbackName(host) || slices.Contains(s.cfg.AllowedHosts, host) {
			return next(c)
		}
		return echo.NewHTTPError(http.StatusMisdirectedRequest, fmt.Sprintf(
			"This server answers only to localhost, 127.0.0.1 and [::1], not to %q. To reach it by that name, "+
				"start it with --allowed-hosts %s (or with an access token).", host, host))
	}
}

// hostName is the lower-case name of a Host header, without its port or brackets.
func hostName(hostport string) string {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	return strings.ToLower(strings.Trim(host, "[]"))
}

// loopbackName reports whether a host name always means this machine.
func loopbackName(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// AllowedHosts parses the --allowed-hosts list: names separated by commas,
// without ports.
func AllowedHosts(list string) ([]string, error) {
	var out []string
	for _, name := range strings.Split(list, ",") {
		name = strings.ToLower(strings.TrimSpace(name))
		if name == "" {
			continue
		}
		if strings.ContainsAny(name, "/:@ ") && net.ParseIP(strings.Trim(name, "[]")) == nil {
			return nil, fmt.Errorf("--allowed-hosts: %q is not a host name (give names without scheme or port, separated by commas)", name)
		}
		out = append(out, strings.Trim(name, "[]"))
	}
	return out, nil
}

// sameOrigin refuses a state-changing request that a browser sent from
// another origin (Sec-Fetch-Site, else Origin against Host), whatever its
// cookies or tokens: a form on another site, or on another port of this one,
// never acts here.
func sameOrigin() echo.MiddlewareFunc {
	cop := http.NewCrossOriginProtection()
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if err := cop.Check(c.Request()); err != nil {
				return echo.NewHTTPError(http.StatusForbidden,
					"This request came from another site and was refused: assay acts only on forms of its own pages.")
			}
			return next(c)
		}
	}
}
