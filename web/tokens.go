package web

import (
	"context"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"assay"
	"assay/store"
	"assay/templates"
)

// tokenRows fills the token list of the settings page.
func (s *Server) tokenRows(ctx context.Context, v *templates.TokensView) error {
	list, err := s.db.Tokens(ctx)
	if err != nil {
		return err
	}
	if v.NewSecret == "" {
		v.Open = !s.authRequired(ctx)
	}
	v.First = true
	for _, t := range list {
		if t.RevokedAt == nil {
			v.First = false
		}
		row := templates.TokenRow{Name: t.Name, Role: string(t.Role), Created: templates.When(t.CreatedAt), CreatedBy: t.CreatedBy,
			LastUsed: "never", Active: t.RevokedAt == nil}
		if t.LastUsed != nil {
			row.LastUsed = templates.When(*t.LastUsed)
		}
		if t.RevokedAt != nil {
			row.Revoked = templates.When(*t.RevokedAt)
		}
		v.Rows = append(v.Rows, row)
	}
	return nil
}

// createToken handles POST /settings/tokens: the new token is shown once,
// on the page this answers with.
func (s *Server) createToken(c echo.Context) error {
	ctx := c.Request().Context()
	name, role := c.FormValue("name"), c.FormValue("role")
	open := !s.authRequired(ctx)
	secret, t, err := s.db.CreateToken(ctx, name, store.Role(role))
	if err != nil {
		return s.renderSettings(c, statusFor(err), templates.PriceForm{},
			templates.TokensView{FormName: name, FormRole: role, Error: assay.ErrorMessage(err)})
	}
	s.forgetTokens()
	s.log.Info("token created", "name", t.Name, "role", t.Role, "by", store.Actor(ctx))
	c.Response().Header().Set("Cache-Control", "no-store")
	return s.renderSettings(c, http.StatusCreated, templates.PriceForm{},
		templates.TokensView{NewSecret: secret, NewName: t.Name, NewRole: string(t.Role), NowAsks: open})
}

// revokeToken handles POST /settings/tokens/revoke.
func (s *Server) revokeToken(c echo.Context) error {
	ctx := c.Request().Context()
	name := c.FormValue("name")
	if err := s.db.RevokeToken(ctx, name); err != nil {
		return err
	}
	s.forgetTokens()
	s.log.Info("token revoked", "name", name, "by", store.Actor(ctx))
	setFlash(c, "ok", fmt.Sprintf("%s's token is revoked; their sessions have ended.", name))
	return redirect(c, "/settings#tokens")
}
