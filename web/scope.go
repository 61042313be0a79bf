package web

import (
	"github.com/labstack/echo/v4"

	"assay/store"
	"assay/templates"
)

// reportScope is the run a report page shows, reached by its owner
// (/runs/:id/...) or through a share link (/r/:token/...).
type reportScope struct {
	Run     *store.Run
	Dataset *store.Dataset
	// Shared is true through a share link: the page is read-only, shows no
	// forms, settings, key variable names or links outside the report.
	Shared bool
	// Base prefixes every URL of the report: "/runs/7" or "/r/<token>".
	Base string
}

// scope resolves the run of a report route from its :id or :token parameter.
func (s *Server) scope(c echo.Context) (*reportScope, error) {
	ctx := c.Request().Context()
	sc := &reportScope{}
	var id int64
	var err error
	if token := c.Param("token"); token != "" {
		if id, err = s.db.SharedRun(ctx, token); err != nil {
			return nil, err
		}
		sc.Shared, sc.Base = true, "/r/"+token
	} else {
		if id, err = pathID(c); err != nil {
			return nil, err
		}
		sc.Base = "/runs/" + c.Param("id")
	}
	if sc.Run, err = s.db.Run(ctx, id); err != nil {
		return nil, err
	}
	if sc.Dataset, err = s.db.Dataset(ctx, sc.Run.DatasetID); err != nil {
		return nil, err
	}
	return sc, nil
}

// reportPage is the layout data for a page of a report: read-only through a share link.
func (s *Server) reportPage(c echo.Context, sc *reportScope, title string) templates.Page {
	if sc.Shared {
		return templates.Page{Title: title, Shared: true}
	}
	return s.page(c, title, "runs")
}
