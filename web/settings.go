package web

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"assay"
	"assay/config"
	"assay/store"
	"assay/templates"
)

// settingsPage handles GET /settings; ?model= fills the price form with that model.
func (s *Server) settingsPage(c echo.Context) error {
	form := templates.PriceForm{Model: c.QueryParam("model")}
	if form.Model != "" {
		prices, err := s.db.Prices(c.Request().Context())
		if err != nil {
			return err
		}
		for _, p := range prices {
			if p.Model == form.Model {
				form.Input = price(p.InputPerMTok)
				form.Output = price(p.OutputPerMTok)
				form.CacheRead = optPrice(p.CacheReadPerMTok)
				form.CacheWrite = optPrice(p.CacheWritePerMTok)
				form.Edit = true
			}
		}
	}
	return s.renderSettings(c, http.StatusOK, form, templates.TokensView{})
}

func (s *Server) renderSettings(c echo.Context, status int, form templates.PriceForm, tokens templates.TokensView) error {
	prices, err := s.db.Prices(c.Request().Context())
	if err != nil {
		return err
	}
	v := templates.SettingsView{Page: s.page(c, "Settings", "settings"), Form: form}
	if u := userOf(c); u != nil && u.Role == store.RoleOwner {
		if err := s.tokenRows(c.Request().Context(), &tokens); err != nil {
			return err
		}
		v.Tokens = &tokens
	}
	for _, p := range prices {
		rate := config.Price{InputPerMTok: p.InputPerMTok, CacheReadPerMTok: p.CacheReadPerMTok, CacheWritePerMTok: p.CacheWritePerMTok}
		v.Prices = append(v.Prices, templates.PriceRow{
			Model:         p.Model,
			InputPerMTok:  p.InputPerMTok,
			OutputPerMTok: p.OutputPerMTok,
			CacheRead:     rate.CacheRead(),
			CacheWrite:    rate.CacheWrite(),
			CacheUsual:    p.CacheReadPerMTok == 0 && p.CacheWritePerMTok == 0,
			UpdatedAt:     templates.When(p.UpdatedAt),
		})
	}
	return render(c, status, templates.Settings(v))
}

// setPrice handles POST /settings/prices: adds a price or changes an existing model's.
func (s *Server) setPrice(c echo.Context) error {
	form := templates.PriceForm{Model: strings.TrimSpace(c.FormValue("model")), Input: c.FormValue("input"), Output: c.FormValue("output"),
		CacheRead: c.FormValue("cache_read"), CacheWrite: c.FormValue("cache_write")}
	p, err := priceFromForm(form)
	if err == nil {
		err = s.db.SetPrice(c.Request().Context(), p)
	}
	if err != nil {
		if assay.ErrorCode(err) != assay.EINVALID {
			return err
		}
		form.Error = assay.ErrorMessage(err)
		return s.renderSettings(c, statusFor(err), form, templates.TokensView{})
	}
	setFlash(c, "ok", fmt.Sprintf("Saved the price of %s. Runs launched from now on use it.", p.Model))
	return redirect(c, "/settings")
}

// deletePrice handles POST /settings/prices/delete.
func (s *Server) deletePrice(c echo.Context) error {
	model := c.FormValue("model")
	if err := s.db.DeletePrice(c.Request().Context(), model); err != nil {
		return err
	}
	setFlash(c, "ok", fmt.Sprintf("Deleted the price of %s. Past runs keep the prices they were launched with.", model))
	return redirect(c, "/settings")
}

func priceFromForm(f templates.PriceForm) (assay.Price, error) {
	if f.Model == "" {
		return assay.Price{}, assay.Errorf(assay.EINVALID, "Model: enter the model's name as the API knows it.")
	}
	in, err := parseUSD("Input price", f.Input)
	if err != nil {
		return assay.Price{}, err
	}
	out, err := parseUSD("Output price", f.Output)
	if err != nil {
		return assay.Price{}, err
	}
	p := assay.Price{Model: f.Model, InputPerMTok: in, OutputPerMTok: out}
	if strings.TrimSpace(f.CacheRead) != "" {
		if p.CacheReadPerMTok, err = parseUSD("Cache read price", f.CacheRead); err != nil {
			return assay.Price{}, err
		}
	}
	if strings.TrimSpace(f.CacheWrite) != "" {
		if p.CacheWritePerMTok, err = parseUSD("Cache write price", f.CacheWrite); err != nil {
			return assay.Price{}, err
		}
	}
	return p, nil
}

// optPrice is a stored cache rate as the form shows it: empty for the usual ratio.
func optPrice(v float64) string {
	if v == 0 {
		return ""
	}
	return price(v)
}

// parseUSD reads an amount of dollars, with or without a leading $.
func parseUSD(field, text string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimPrefix(strings.TrimSpace(text), "$"), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return 0, assay.Errorf(assay.EINVALID, "%s: %q is not an amount of USD per million tokens; enter a number such as 0.15 (0 for a free model).", field, text)
	}
	return v, nil
}

func price(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// toSettings sends a GET of a settings form's address back to the page: the
// address stays in the bar after a refused form, and a reload asks for it.
func (s *Server) toSettings(c echo.Context) error {
	return c.Redirect(http.StatusSeeOther, "/settings")
}
