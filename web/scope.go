package web

import (
	"context"
	"errors"
	"fmt"

	"github.com/labstack/echo/v4"

	"assay/report"
	"assay/runner/config"
	"assay/store"
	"assay/templates"
)

// reportScope is the run a report page shows, reached by its owner
// (/runs/:id/...) or through a share link (/r/:token/...).
type reportScope struct {
	Run     *store.Run
	Dataset *store.Dataset
	Config  *config.Config // the run's stored config, ${...} references as written
	// Shared is true through a share link: the page is read-only, shows no
	// forms, settings, key variable names or links outside the report.
	Shared bool
	// Base prefixes every URL of the report: "/runs/7", "/r/<token>" or
	// "/rv/<token>".
	Base string
	// View is whether the report applies reviews to the scores.
	View report.View
	// Judge is the panel judge whose scores alone the report shows; "" for
	// the whole panel.
	Judge string
	// ReviewLink is the review link the page was reached through: its
	// samples and sample pages, with review controls and nothing else.
	ReviewLink *store.ReviewLink
}

// scope resolves the run of a report route from its :id or :token parameter.
func (s *Server) scope(c echo.Context) (*reportScope, error) {
	ctx := c.Request().Context()
	if link := c.Param("link"); link != "" {
		if err := s.lockedOut(c); err != nil {
			return nil, err
		}
		l, err := s.db.ReviewLinkByToken(ctx, link)
		if err != nil {
			if errors.Is(err, store.ErrNotFound) {
				s.guessed(c, "review link")
			}
			return nil, err
		}
		sc, err := ownerScope(ctx, s.db, l.RunID)
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
		return ownerScope(ctx, s.db, id)
	}
	if err := s.lockedOut(c); err != nil {
		return nil, err
	}
	id, err := s.db.SharedRun(ctx, token)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			s.guessed(c, "share link")
		}
		return nil, err
	}
	sc, err := ownerScope(ctx, s.db, id)
	if err != nil {
		return nil, err
	}
	sc.Shared, sc.Base = true, "/r/"+token
	return sc, nil
}

// ownerScope is the scope of a report read by its owner: the run, its dataset
// and the base /runs/:id.
func ownerScope(ctx context.Context, db *store.DB, runID int64) (*reportScope, error) {
	run, err := db.Run(ctx, runID)
	if err != nil {
		return nil, err
	}
	return runScope(ctx, db, run)
}

// runScope is the owner's scope of a run already read.
func runScope(ctx context.Context, db *store.DB, run *store.Run) (*reportScope, error) {
	ds, err := db.Dataset(ctx, run.DatasetID)
	if err != nil {
		return nil, err
	}
	cfg, err := config.Stored(run.Config)
	if err != nil {
		return nil, store.Wrapf(store.EINTERNAL, err, "Run %d's stored config cannot be read", run.ID)
	}
	return &reportScope{Run: run, Dataset: ds, Config: cfg, Base: fmt.Sprintf("/runs/%d", run.ID)}, nil
}

// reportPage is the layout data for a page of a report: read-only through a share link.
func (s *Server) reportPage(c echo.Context, sc *reportScope, title string) templates.Page {
	if sc.ReviewLink != nil {
		return templates.Page{Title: title, Shared: true, SharedLabel: "Reviewing as " + sc.ReviewLink.Name}
	}
	if sc.Shared {
		return templates.Page{Title: title, Shared: true}
	}
	return s.page(c, title, "runs")
}
