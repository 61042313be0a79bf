package web

import (
	"errors"
	"fmt"

	"github.com/labstack/echo/v4"

	"assay"
)

// createShare handles POST /runs/:id/shares: a new read-only link to the run's report.
func (s *Server) createShare(c echo.Context) error {
	run, err := s.pathRun(c)
	if err != nil {
		return err
	}
	sh, err := s.db.CreateShare(c.Request().Context(), run.ID)
	if err != nil {
		return err
	}
	s.log.Info("share link created", "run_id", run.ID)
	setFlashAt(c, "ok", "Share link created — copy it now, it is not shown again; anyone with it can read this report:", origin(c)+"/r/"+sh.Token, "sharing")
	return redirect(c, fmt.Sprintf("/runs/%d#sharing", run.ID))
}

// revokeShare handles POST /runs/:id/shares/:token/revoke: the link then leads nowhere.
func (s *Server) revokeShare(c echo.Context) error {
	run, err := s.pathRun(c)
	if err != nil {
		return err
	}
	err = s.db.RevokeShare(c.Request().Context(), run.ID, c.Param("token"))
	switch {
	case errors.Is(err, assay.ErrNotFound):
		setFlash(c, "info", "That link was already revoked.")
	case err != nil:
		return err
	default:
		s.log.Info("share link revoked", "run_id", run.ID)
		setFlash(c, "ok", "Share link revoked: it now leads to “not found”.")
	}
	return redirect(c, fmt.Sprintf("/runs/%d#sharing", run.ID))
}
