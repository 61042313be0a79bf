package web

import (
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"assay/readmodel"
	"assay/templates"
)

// judgesPage handles GET /runs/:id/judges: the judges of the run's answers
// side by side — the run that made them and every run that judged them
// again.
func (s *Server) judgesPage(c echo.Context) error {
	ctx := c.Request().Context()
	sc, err := s.scope(c)
	if err != nil {
		return err
	}
	ids, err := s.db.JudgedAlike(ctx, sc.Run.ID)
	if err != nil {
		return err
	}
	var reports []*readmodel.Viewed
	for _, id := range ids {
		osc, err := readmodel.OwnerScope(ctx, s.db, id)
		if err != nil {
			return err
		}
		r, err := s.model.Report(ctx, osc)
		if err != nil {
			return err
		}
		reports = append(reports, r)
	}
	v, err := readmodel.JudgesView(ctx, s.db, reports)
	if err != nil {
		return err
	}
	page := s.reportPage(c, sc, fmt.Sprintf("Judges of run %d's answers", sc.Run.ID))
	return render(c, http.StatusOK, templates.Judges(templates.JudgesPage{Page: page, RunID: sc.Run.ID, View: v}))
}
