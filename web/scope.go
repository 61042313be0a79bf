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
		if err := s.lockedOut(c); err != nil {
			return nil, err
		}
		l, err := s.db.ReviewLinkByToken(ctx, link)
		if err != nil {
			if errors.Is(err, assay.ErrNotFound) {
				s.guessed(c, "review link")
			}
			return nil, err
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
	if err := s.lockedOut(c); err != nil {
		return nil, err
	}
	id, err := s.db.SharedRun(ctx, token)
	if err != nil {
		if errors.Is(err, assay.ErrNotFound) {
			s.guessed(c, "share link")
		}
		return nil, err
	}
	sc, err := readmodel.OwnerScope(ctx, s.db, id)
	if err != nil {
		return nil, err
	}
	sc.Shared, sc.Base = true, "/r/"+token
	return sc, nil
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
