package web

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"assay"
	"assay/config"
	"assay/report"
	"assay/store"
)

// maxNoteLength bounds a reviewer's note, in characters.
const maxNoteLength = 4000

// What a reviewer may send besides a verdict (store.VerdictAgree,
// store.VerdictOverride): a note for the verdict they gave, kept with it,
// or their verdict taken back.
const (
	verdictNote     = "note"
	verdictWithdraw = "withdraw"
)

// reviewInput is a verdict as a reviewer sends it.
type reviewInput struct {
	ScoreID  int64    `json:"score_id"`
	Verdict  string   `json:"verdict"`
	Value    *float64 `json:"value"`
	Note     string   `json:"note"`
	Reviewer string   `json:"reviewer"` // on a server without tokens only: who reviews
}

// reviewer is who records a verdict: the signed-in user, the name a review
// link was made for, or on a server without tokens the name given.
type reviewer struct {
	Name string
	Link string // the review link's token, if through one
}

// recordReview checks a verdict against the score it names and stores it.
// Nothing is stored when anything is wrong.
func (s *Server) recordReview(c echo.Context, runID int64, who reviewer, in reviewInput) (*store.Review, error) {
	ctx := c.Request().Context()
	if who.Name == "" {
		return nil, assay.Errorf(assay.EINVALID, "Say who is reviewing: a verdict carries the reviewer's name.")
	}
	info, err := s.db.ScoreInfo(ctx, runID, in.ScoreID)
	if err != nil {
		return nil, err
	}
	switch in.Verdict {
	case verdictWithdraw:
		if err := s.db.WithdrawReview(ctx, runID, info.ID, who.Name); err != nil {
			return nil, err
		}
		return &store.Review{RunID: runID, ScoreID: info.ID, Reviewer: who.Name, Evaluator: info.Evaluator, Metric: info.Metric,
			Condition: info.Condition, SampleRow: info.SampleRow, Repetition: info.Repetition}, nil
	case verdictNote:
		// A note alone keeps the verdict it goes with; it is never one.
		had, err := s.db.ReviewOf(ctx, runID, info.ID, who.Name)
		if err != nil {
			return nil, assay.Errorf(assay.EINVALID, "A note goes with a verdict: agree, or give your value, first.")
		}
		in.Verdict = had.Verdict
		if had.Verdict == store.VerdictOverride {
			in.Value = &had.Value
		}
	}
	v := &store.Review{RunID: runID, ScoreID: info.ID, Reviewer: who.Name, Verdict: in.Verdict, JudgeValue: info.Value,
		Value: info.Value, Note: strings.TrimSpace(in.Note), Link: who.Link}
	if utf8.RuneCountInString(v.Note) > maxNoteLength {
		return nil, assay.Errorf(assay.EINVALID, "A note is at most %d characters.", maxNoteLength)
	}
	switch in.Verdict {
	case store.VerdictAgree:
	case store.VerdictOverride:
		if v.Value, err = s.overrideValue(ctx, runID, info, in.Value); err != nil {
			return nil, err
		}
	default:
		return nil, assay.Errorf(assay.EINVALID, "A verdict is agree or override (or note, withdraw), not %q.", in.Verdict)
	}
	if err := s.db.SaveReview(ctx, v); err != nil {
		return nil, err
	}
	v.Evaluator, v.Metric, v.Condition, v.SampleRow, v.Repetition = info.Evaluator, info.Metric, info.Condition, info.SampleRow, info.Repetition
	return v, nil
}

// overrideValue is the reviewer's value, refused when missing or off the
// metric's scale.
func (s *Server) overrideValue(ctx context.Context, runID int64, info *store.ScoreInfo, value *float64) (float64, error) {
	if value == nil {
		return 0, assay.Errorf(assay.EINVALID, "An override needs the value you would give.")
	}
	run, err := s.db.Run(ctx, runID)
	if err != nil {
		return 0, err
	}
	sc := scaleFor(run.Config, info.Evaluator, info.Metric, info.Value)
	lo, hi := sc.Bounds()
	x := *value
	switch {
	case math.IsNaN(x) || x < lo || x > hi:
		return 0, assay.Errorf(assay.EINVALID, "%s is on the %s scale: %v is outside it.", info.Metric, sc, x)
	case sc.Integral() && x != math.Trunc(x):
		return 0, assay.Errorf(assay.EINVALID, "%s takes whole numbers (%s): %v is not one.", info.Metric, sc, x)
	}
	return x, nil
}

// scaleFor is the scale of an evaluator's metric; for one assay does not
// know, the scale its value fits.
func scaleFor(cfg *config.Config, evaluator, metric string, value float64) config.Scale {
	if sc, ok := cfg.MetricScale(evaluator, metric); ok {
		return sc
	}
	if value > 1 {
		return config.ScaleLikert
	}
	return config.ScaleUnit
}

// apiRecordReview handles POST /api/runs/:id/reviews.
func (s *Server) apiRecordReview(c echo.Context) error {
	id, err := pathID(c)
	if err != nil {
		return err
	}
	var in reviewInput
	if err := json.NewDecoder(c.Request().Body).Decode(&in); err != nil {
		return assay.Errorf(assay.EINVALID, "The body must be a JSON object {\"score_id\", \"verdict\", \"value\", \"note\"}: %v", err)
	}
	who := s.reviewerOf(c)
	if who.Name == "" {
		who.Name = strings.TrimSpace(in.Reviewer)
	}
	v, err := s.recordReview(c, id, who, in)
	if err != nil {
		return err
	}
	if in.Verdict == verdictWithdraw {
		return c.JSON(http.StatusOK, map[string]any{"withdrawn": v})
	}
	return c.JSON(http.StatusCreated, v)
}

// apiReviews handles GET /api/runs/:id/reviews.
func (s *Server) apiReviews(c echo.Context) error {
	id, err := pathID(c)
	if err != nil {
		return err
	}
	if _, err := s.db.Run(c.Request().Context(), id); err != nil {
		return err
	}
	held, err := s.model.Reviews(c.Request().Context(), id)
	if err != nil {
		return err
	}
	vs := held.List
	if vs == nil {
		vs = []store.Review{}
	}
	return c.JSON(http.StatusOK, map[string]any{"reviews": vs})
}

// apiAgreement handles GET /api/runs/:id/agreement.
func (s *Server) apiAgreement(c echo.Context) error {
	sc, err := s.scope(c)
	if err != nil {
		return err
	}
	r, err := s.model.Report(c.Request().Context(), sc)
	if err != nil {
		return err
	}
	metrics := r.Reviews.Agreement
	if metrics == nil {
		metrics = []report.Agreement{}
	}
	errs := r.Reviews.JudgeErrors
	if errs == nil {
		errs = []report.JudgeErrors{}
	}
	return c.JSON(http.StatusOK, map[string]any{"verdicts": r.Reviews.Verdicts, "reviewed": r.Reviews.Scored,
		"reviewers": r.Reviews.Reviewers, "metrics": metrics, "judge_errors": errs})
}

// apiCreateReviewLink handles POST /api/runs/:id/review-links {"name"}.
func (s *Server) apiCreateReviewLink(c echo.Context) error {
	id, err := pathID(c)
	if err != nil {
		return err
	}
	var in struct {
		Name string `json:"name"`
	}
	if err := json.NewDecoder(c.Request().Body).Decode(&in); err != nil {
		return assay.Errorf(assay.EINVALID, "The body must be a JSON object {\"name\"}: %v", err)
	}
	l, err := s.db.CreateReviewLink(c.Request().Context(), id, strings.TrimSpace(in.Name))
	if err != nil {
		return err
	}
	s.log.Info("review link created", "run_id", id, "for", l.Name, "by", store.Actor(c.Request().Context()))
	return c.JSON(http.StatusCreated, map[string]string{"token": l.Token, "url": origin(c) + "/rv/" + l.Token, "name": l.Name})
}

// apiRevokeReviewLink handles DELETE /api/runs/:id/review-links/:token.
func (s *Server) apiRevokeReviewLink(c echo.Context) error {
	id, err := pathID(c)
	if err != nil {
		return err
	}
	if err := s.db.RevokeReviewLink(c.Request().Context(), id, c.Param("token")); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// reviewerOf is who reviews in this request: a review link's name, the
// signed-in user, or on a server without tokens the name the browser keeps.
func (s *Server) reviewerOf(c echo.Context) reviewer {
	if l, ok := c.Get("reviewLink").(*store.ReviewLink); ok {
		return reviewer{Name: l.Name, Link: l.Key}
	}
	u := userOf(c)
	if u != nil && !u.Open {
		return reviewer{Name: u.Name}
	}
	if ck, err := c.Cookie(reviewerCookie); err == nil {
		if name, err := url.QueryUnescape(ck.Value); err == nil {
			return reviewer{Name: cleanName(name)}
		}
	}
	return reviewer{}
}

// keepReviewerName remembers, in the browser, the name it reviews under.
func keepReviewerName(c echo.Context, name string) {
	c.SetCookie(&http.Cookie{Name: reviewerCookie, Value: url.QueryEscape(name), Path: "/", MaxAge: 365 * 24 * 3600,
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: c.Scheme() == "https"})
}

// reviewerCookie keeps, on a server without tokens, the name a browser
// reviews under.
const reviewerCookie = "assay_reviewer"

// cleanName is a reviewer's name as kept: trimmed, at most 100 characters.
func cleanName(s string) string {
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) > 100 {
		s = string([]rune(s)[:100])
	}
	return s
}
