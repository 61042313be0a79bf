package web

import (
	"errors"

	"github.com/labstack/echo/v4"

	"assay"
	"assay/readmodel"
	"assay/templates"
)

// scope resolves the run of a report route from its :id or :token parameter.
func (s *Server) scope(c echo.Context) (*readmodel.Scope, error) {
	ctx := c.Request().Context()
	if link := c.Param("link"); link != "" {
		l, err := s.db.ReviewLinkByToken(ctx, link)
		if err != nil {
			return nil, s.guessedIfNotFound(c, err, "review link")
		}
		sc, err := readmodel.OwnerScope(ctx, s.db, l.RunID)
		if err != nil {
			return nil, err
		}
		sc.Shared, sc.Base, sc.ReviewLink = true, "/rv/"+link, l
		c.Set("reviewLink", l)
		return sc, nil
	}
	token := c.Param("token")
	if token == "" {
		id, err := pathID(c)
		if err != nil {
			return nil, err
		}
		return readmodel.OwnerScope(ctx, s.db, id)
	}
	id, err := s.db.SharedRun(ctx, token)
	if err != nil {
		return nil, s.guessedIfNotFound(c, err, "share link")
	}
	sc, err := readmodel.OwnerScope(ctx, s.db, id)
	if err != nil {
		return nil, err
	}
	sc.Shared, sc.Base = true, "/r/"+token
	return sc, nil
}

// guessedIfNotFound counts a link that matched nothing as a guess: err,
// or 429 once the address has failed too often.
func (s *Server) guessedIfNotFound(c echo.Context, err error, what string) error {
	if !errors.Is(err, assay.ErrNotFound) {
		return err
	}
	if limited := s.guessed(c, what); limited != nil {
		return limited
	}
	return err
}

// reportPage is the layout data for a page of a report: read-only through a share link.
func (s *Server) reportPage(c echo.Context, sc *readmodel.Scope, title string) templates.Page {
	if sc.ReviewLink != nil {
		return templates.Page{Title: title, Shared: true, SharedLabel: "Reviewing as " + sc.ReviewLink.Name}
	}
	if sc.Shared {
		return templates.Page{Title: title, Shared: true}
	}
	return s.page(c, title, "runs")
}
