package web

import (
	"assay/readmodel"
	"assay/report"
	"assay/route"
	"context"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"
)

// exportJSON handles GET /runs/:id/export.json.
func (s *Server) exportJSON(c echo.Context) error {
	return s.export(c, "json", "application/json")
}

// exportCSV handles GET /runs/:id/export.csv.
func (s *Server) exportCSV(c echo.Context) error {
	return s.export(c, "csv", "text/csv; charset=utf-8")
}

// exportHTML handles GET /runs/:id/export.html and GET /r/:token/export.html:
// the report as one file that opens with no network. What it shows is
// computed before a byte is sent, so that a failure there still gets an
// error page; its transcripts are read as they are sent, and a failure
// among them cuts the file short and is logged.
func (s *Server) exportHTML(c echo.Context) error {
	sc, err := s.scope(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	r, err := s.model.Report(ctx, sc)
	if err != nil {
		return err
	}
	d, err := readmodel.PrepareExportHTML(ctx, s.db, sc, r, queryOf(c), func(opt route.Options, compute func(context.Context) (*report.Routing, error)) (*report.Routing, error) {
		return s.replayInTurn(ctx, replayKey(sc.Run.ID, r.Version, "", opt), compute)
	})
	if err != nil {
		return err
	}
	attach(c, sc.Run.ID, "html", "text/html; charset=utf-8")
	if err := d.Write(ctx, c.Response()); err != nil {
		s.log.Error("export failed", "run_id", sc.Run.ID, "format", "html", "err", err)
		return err
	}
	return nil
}

// export streams a JSON or CSV export. Once the first bytes are sent a failure
// can only cut the file short, so it is logged.
func (s *Server) export(c echo.Context, format, contentType string) error {
	sc, err := s.scope(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	r, err := s.model.Report(ctx, sc) // the report a page computed, when one did
	if err != nil {
		return err
	}
	attach(c, sc.Run.ID, format, contentType)
	if format == "json" {
		err = readmodel.ExportJSON(ctx, s.db, sc, r, c.Response())
	} else {
		err = readmodel.ExportCSV(ctx, s.db, sc, r, c.Response())
	}
	if err != nil {
		s.log.Error("export failed", "run_id", sc.Run.ID, "format", format, "err", err)
	}
	return err
}

// attach starts a download named after the run.
func attach(c echo.Context, runID int64, ext, contentType string) {
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, contentType)
	h.Set(echo.HeaderContentDisposition, fmt.Sprintf(`attachment; filename="assay-run-%d.%s"`, runID, ext))
	c.Response().WriteHeader(http.StatusOK)
}
