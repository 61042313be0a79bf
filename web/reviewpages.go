package web

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"assay"
	"assay/readmodel"
	"assay/store"
	"assay/templates"
)

// refusedReview is a verdict the server would not store, and why.
type refusedReview struct {
	scoreID int64
	msg     string
	note    string
}

// canReview reports whether the page's reader may give verdicts: through a
// review link, or as a reviewer or owner on the run's own pages; never
// through a share link.
func canReview(c echo.Context, sc *readmodel.Scope) bool {
	if sc.ReviewLink != nil {
		return true
	}
	if sc.Shared {
		return false
	}
	u := userOf(c)
	return u != nil && u.Role.Allows(store.RoleReviewer)
}

// reviewControls adds to a sample page every verdict on its scores and,
// for a reader who may review, the form that gives one.
func (s *Server) reviewControls(c echo.Context, sc *readmodel.Scope, smp *store.Sample, v *templates.SampleView, failed refusedReview) error {
	if sc.Shared && sc.ReviewLink == nil {
		return nil
	}
	verdicts, err := s.model.Reviews(c.Request().Context(), sc.Run.ID)
	if err != nil {
		return err
	}
	byScore := map[int64][]store.Review{}
	for _, vd := range verdicts.List {
		if vd.SampleRow == smp.ID {
			byScore[vd.ScoreID] = append(byScore[vd.ScoreID], vd)
		}
	}
	who := s.reviewerOf(c)
	review := canReview(c, sc)
	csrf, _ := c.Get("csrf").(string)
	form := scoreForm{run: sc.Run, action: sc2action(v, nil), csrf: csrf, back: sampleURL(sc.Base, smp.ID, c.QueryString()), who: who.Name, failed: failed}
	for ci := range v.Conditions {
		for ri := range v.Conditions[ci].Results {
			for ji := range v.Conditions[ci].Results[ri].Judgements {
				j := &v.Conditions[ci].Results[ri].Judgements[ji]
				for si := range j.Scores {
					sv := &j.Scores[si]
					list := byScore[sv.ID]
					sv.Verdicts = verdictViews(list, who.Name)
					if review {
						sv.Review = form.review(j.Evaluator, sv, list)
					}
				}
			}
		}
	}
	if review {
		v.Queue = s.queueBar(c, sc, smp)
		v.Queue.AskName = who.Name == ""
	}
	return nil
}

// verdictViews is a score's verdicts, the latest first.
func verdictViews(list []store.Review, who string) []templates.VerdictView {
	var out []templates.VerdictView
	for i := len(list) - 1; i >= 0; i-- {
		vd := list[i]
		out = append(out, templates.VerdictView{Reviewer: vd.Reviewer, Override: vd.Verdict == store.VerdictOverride,
			Value: readmodel.Score(vd.Value), Note: vd.Note, At: templates.When(vd.At), Mine: vd.Reviewer == who})
	}
	return out
}

// scoreForm is what each score's review form on a sample page shares: the
// run, where it posts and comes back to, who reviews, and a verdict the
// last post was refused.
type scoreForm struct {
	run                *store.Run
	action, csrf, back string
	who                string
	failed             refusedReview
}

// review is the form that gives a verdict on a score: the metric's scale,
// the reviewer's note, and the refusal of the last one posted.
func (f scoreForm) review(evaluator string, sv *templates.ScoreView, list []store.Review) *templates.ScoreReview {
	scale := scaleFor(f.run.Config, evaluator, sv.Metric, mustScore(sv.Value))
	lo, hi := scale.Bounds()
	r := &templates.ScoreReview{Action: f.action, CSRF: f.csrf, Back: f.back, Min: readmodel.Score(lo), Max: readmodel.Score(hi),
		Step: "any", AskName: f.who == ""}
	if scale.Integral() {
		r.Step = "1"
	}
	for _, vd := range list {
		if vd.Reviewer == f.who {
			r.Note = vd.Note
		}
	}
	if f.failed.scoreID == sv.ID {
		r.Error, r.Note = f.failed.msg, f.failed.note
	}
	return r
}

// sc2action is where a score's review form posts: the report's base + /reviews.
func sc2action(v *templates.SampleView, _ *templates.ScoreView) string {
	return v.Report.Base + "/reviews"
}

func mustScore(s string) float64 {
	f, _ := strconv.ParseFloat(s, 64)
	return f
}

// reviewForm handles POST /runs/:id/reviews and POST /rv/:link/reviews: a
// verdict from a sample page's form. It answers with the sample's page
// (htmx takes the score's row from it); without script, with a redirect
// back to it.
func (s *Server) reviewForm(c echo.Context) error {
	sc, err := s.scope(c)
	if err != nil {
		return err
	}
	if !canReview(c, sc) {
		return echo.NewHTTPError(http.StatusForbidden, "You may read this run, not review it.")
	}
	scoreID, _ := strconv.ParseInt(c.FormValue("score_id"), 10, 64)
	in := reviewInput{ScoreID: scoreID, Verdict: c.FormValue("verdict"), Note: c.FormValue("note")}
	if raw := strings.TrimSpace(c.FormValue("value")); raw != "" && in.Verdict == store.VerdictOverride {
		x, err := strconv.ParseFloat(raw, 64)
		if err != nil {
			return s.refuse(c, sc, scoreID, in.Note, assay.Errorf(assay.EINVALID, "%q is not a number.", raw))
		}
		in.Value = &x
	}
	who := s.reviewerOf(c)
	if who.Name == "" {
		if who.Name = cleanName(c.FormValue("reviewer")); who.Name != "" {
			keepReviewerName(c, who.Name)
		}
	}
	v, err := s.recordReview(c, sc.Run.ID, who, in)
	if err != nil {
		return s.refuse(c, sc, scoreID, in.Note, err)
	}
	back := localPath(c.FormValue("back"))
	if !strings.HasPrefix(back, sc.Base+"/samples/") {
		back = sampleURL(sc.Base, v.SampleRow, "")
	}
	return c.Redirect(http.StatusSeeOther, back+fmt.Sprintf("#score-%d", v.ScoreID))
}

// refuse shows the sample page again with why the verdict was refused,
// beside the score it was for.
func (s *Server) refuse(c echo.Context, sc *readmodel.Scope, scoreID int64, note string, err error) error {
	if code := assay.ErrorCode(err); code != assay.EINVALID && code != assay.ENOTFOUND {
		return err
	}
	info, ierr := s.db.ScoreInfo(c.Request().Context(), sc.Run.ID, scoreID)
	if ierr != nil {
		return err
	}
	smp, serr := s.db.Sample(c.Request().Context(), info.SampleRow)
	if serr != nil {
		return err
	}
	return s.renderSample(c, sc, smp, refusedReview{scoreID: scoreID, msg: assay.ErrorMessage(err), note: note})
}

// reviewLinkHome handles GET /rv/:link: a review link opens on its samples.
func (s *Server) reviewLinkHome(c echo.Context) error {
	sc, err := s.scope(c)
	if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, sc.Base+"/samples")
}

// createReviewLinkForm handles POST /runs/:id/review-links from the run's page.
func (s *Server) createReviewLinkForm(c echo.Context) error {
	run, err := s.pathRun(c)
	if err != nil {
		return err
	}
	l, err := s.db.CreateReviewLink(c.Request().Context(), run.ID, strings.TrimSpace(c.FormValue("name")))
	if err != nil {
		if assay.ErrorCode(err) == assay.EINVALID {
			setFlash(c, "error", assay.ErrorMessage(err))
			return redirect(c, fmt.Sprintf("/runs/%d#reviewing", run.ID))
		}
		return err
	}
	s.log.Info("review link created", "run_id", run.ID, "for", l.Name, "by", store.Actor(c.Request().Context()))
	setFlashAt(c, "ok", fmt.Sprintf("Review link for %s created — copy it now, it is not shown again: send it to them; it opens this run's samples with review controls and nothing else.", l.Name),
		origin(c)+"/rv/"+l.Token, "reviewing")
	return redirect(c, fmt.Sprintf("/runs/%d#reviewing", run.ID))
}

// revokeReviewLinkForm handles POST /runs/:id/review-links/:token/revoke.
func (s *Server) revokeReviewLinkForm(c echo.Context) error {
	run, err := s.pathRun(c)
	if err != nil {
		return err
	}
	if err := s.db.RevokeReviewLink(c.Request().Context(), run.ID, c.Param("token")); err != nil {
		return err
	}
	setFlash(c, "ok", "Review link revoked: it now leads nowhere. The verdicts given through it are kept.")
	return redirect(c, fmt.Sprintf("/runs/%d#reviewing", run.ID))
}

// reviewLinkRows lists a run's review links for its page.
func reviewLinkRows(c echo.Context, links []store.ReviewLink) []templates.ReviewLinkRow {
	var out []templates.ReviewLinkRow
	for _, l := range links {
		row := templates.ReviewLinkRow{Key: l.Key, Name: l.Name,
			Created: templates.When(l.CreatedAt), CreatedBy: l.CreatedBy, Verdicts: l.Verdicts}
		if l.RevokedAt != nil {
			row.Revoked = templates.When(*l.RevokedAt)
		}
		out = append(out, row)
	}
	return out
}
