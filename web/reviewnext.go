package web

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"assay"
	"assay/report"
)

// maxReviewNext bounds the answers one call of review-next lists.
const maxReviewNext = 500

// nextAnswer is an answer to review, as GET /api/runs/:id/review-next gives it.
type nextAnswer struct {
	report.NextAnswer
	SampleID string `json:"sample_id"`
	Model    string `json:"model"` // the model that answered; "" for a run of one model
}

// apiReviewNext handles GET /api/runs/:id/review-next?n=K[&order=random]:
// the next K scores nobody has reviewed, sample after sample in the active
// review order (where the judge is least certain first), each with the
// probability its sample is drawn with. Reviewed whole and in that order,
// they correct the judge's mean (the summary's "ppi").
func (s *Server) apiReviewNext(c echo.Context) error {
	sc, err := s.scope(c)
	if err != nil {
		return err
	}
	n := 10
	if v := c.QueryParam("n"); v != "" {
		if n, err = strconv.Atoi(v); err != nil || n < 1 || n > maxReviewNext {
			return assay.Errorf(assay.EINVALID, "n %q: want a whole number from 1 to %d.", v, maxReviewNext)
		}
	}
	order := report.OrderActive
	switch v := c.QueryParam("order"); v {
	case "", report.OrderActive:
	case report.OrderRandom:
		order = v
	default:
		return assay.Errorf(assay.EINVALID, "order %q: want active or random.", v)
	}
	ctx := c.Request().Context()
	r, err := s.model.Report(ctx, sc)
	if err != nil {
		return err
	}
	held, err := s.model.Reviews(ctx, sc.Run.ID)
	if err != nil {
		return err
	}
	reviewed := make(map[int64]bool, len(held.List))
	for _, v := range held.List {
		reviewed[v.ScoreID] = true
	}
	models := map[string]string{}
	for _, cond := range sc.Run.Conditions {
		models[cond.Name] = cond.Model
	}
	ids := map[int64]string{}
	out := []nextAnswer{}
	for _, a := range r.ReviewNext(order, reviewed, n) {
		id, ok := ids[a.SampleRow]
		if !ok {
			smp, err := s.db.Sample(ctx, a.SampleRow)
			if err != nil {
				return err
			}
			id, ids[a.SampleRow] = smp.SampleID, smp.SampleID
		}
		out = append(out, nextAnswer{NextAnswer: a, SampleID: id, Model: models[a.Condition]})
	}
	return c.JSON(http.StatusOK, map[string]any{"order": order, "answers": out})
}
