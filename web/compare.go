package web

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"github.com/labstack/echo/v4"

	"assay"
	"assay/readmodel"
	"assay/report"
	"assay/store"
	"assay/templates"
)

// comparePage handles GET /compare?a=RUN&b=RUN: two runs of the same dataset,
// condition by condition, paired by sample.
func (s *Server) comparePage(c echo.Context) error {
	ctx := c.Request().Context()
	ra, err := s.compareSide(ctx, c.QueryParam("a"))
	if err != nil {
		return err
	}
	rb, err := s.compareSide(ctx, c.QueryParam("b"))
	if err != nil {
		return err
	}
	if ra.Scope.Dataset.SHA256 != rb.Scope.Dataset.SHA256 {
		return assay.Errorf(assay.EINVALID, "Runs #%d and #%d are on different datasets: only runs of the same dataset bytes (same SHA-256) can be compared.",
			ra.Scope.Run.ID, rb.Scope.Run.ID)
	}
	v := templates.CompareView{
		Page:    s.page(c, "Compare runs", "runs"),
		A:       compareRun(ra.Scope.Run),
		B:       compareRun(rb.Scope.Run),
		Dataset: readmodel.DatasetRow(*ra.Scope.Dataset),
		SwapURL: fmt.Sprintf("/compare?a=%d&b=%d", rb.Scope.Run.ID, ra.Scope.Run.ID),
	}
	if err := compareConditions(ctx, s.db, ra, rb, &v); err != nil {
		return err
	}
	if v.Settings, v.SameCount, err = configDiff(ra, rb); err != nil {
		return err
	}
	return render(c, http.StatusOK, templates.Compare(v))
}

// compareSide loads the report of the run a query parameter names.
func (s *Server) compareSide(ctx context.Context, param string) (*readmodel.Viewed, error) {
	id, err := strconv.ParseInt(param, 10, 64)
	if err != nil || id <= 0 {
		return nil, assay.Errorf(assay.EINVALID, "Name two runs to compare: /compare?a=RUN&b=RUN.")
	}
	sc, err := readmodel.OwnerScope(ctx, s.db, id)
	if err != nil {
		return nil, err
	}
	return s.model.Report(ctx, sc)
}

// comparison is run B compared with run A under one condition.
type comparison struct {
	paired []report.Paired
	gaps   []report.Gap // the samples that regressed most
}

// compared compares rb with ra under a condition, once per version of the
// two reports: it is kept on ra's report, which the server keeps until
// run A changes, under rb's run and version. A paired bootstrap of every
// sample on every metric of every condition took 0.2 s on each view of
// two 150,000-result runs.
func compared(ra, rb *readmodel.Viewed, condition, inB string, metrics []report.Metric) *comparison {
	key := fmt.Sprintf("compare/%d/%s/%s/%s", rb.Scope.Run.ID, rb.Version, condition, inB)
	return ra.Memo(key, func() any {
		sa, sb := ra.SideFor(condition, metrics), rb.SideFor(inB, metrics)
		return &comparison{paired: report.ComparePaired(metrics, sa, sb), gaps: report.Gaps(metrics, sa, sb, readmodel.MaxGaps, true)}
	}).(*comparison)
}

func compareRun(r *store.Run) templates.CompareRun {
	return templates.CompareRun{ID: r.ID, Name: r.Name, Status: string(r.Status), Created: templates.When(r.CreatedAt)}
}

// compareConditions compares each condition the runs share on the metrics
// both have, and lists the samples that regressed in run B.
func compareConditions(ctx context.Context, db *store.DB, ra, rb *readmodel.Viewed, v *templates.CompareView) error {
	var metrics []report.Metric
	for _, m := range ra.Metrics {
		if rb.MetricIndex(m.Evaluator, m.Name) >= 0 {
			metrics = append(metrics, m)
		}
	}
	matchedInB := map[string]bool{}
	for _, name := range ra.Conditions {
		inB, ok := sameCondition(ra, rb, name)
		if !ok {
			v.Unmatched = append(v.Unmatched, name+" (only in A)")
			continue
		}
		matchedInB[inB] = true
		shown := name
		if inB != name {
			shown = name + " ↔ " + inB
		}
		cc := templates.CompareCondition{Name: shown, Paired: templates.PairedView{A: "run A", B: "run B"}}
		if len(metrics) == 0 {
			cc.Paired.Message = "The runs share no metric."
		} else {
			c := compared(ra, rb, name, inB, metrics)
			cc.Paired.Rows = readmodel.PairedRows(c.paired, 0, false)
			for _, m := range metrics {
				cc.Paired.Metrics = append(cc.Paired.Metrics, readmodel.MetricHead(m))
			}
			var err error
			cc.Paired.Gaps, err = readmodel.GapRows(ctx, db, metrics, c.gaps, rb.Scope.Base)
			if err != nil {
				return err
			}
		}
		v.Conditions = append(v.Conditions, cc)
	}
	for _, name := range rb.Conditions {
		if !matchedInB[name] {
			v.Unmatched = append(v.Unmatched, name+" (only in B)")
		}
	}
	return nil
}

// sameCondition is run B's condition that is run A's condition name: the
// same name, or in runs over several models the same condition answered by
// the same model, known in either run by its name or its model id (one run
// may call gpt-4o "large", another "gpt-4o").
func sameCondition(ra, rb *readmodel.Viewed, name string) (string, bool) {
	if rb.HasCondition(name) {
		return name, true
	}
	ca, ok := conditionOf(ra, name)
	if !ok || ca.Model == "" {
		return "", false
	}
	idsA := modelIdentity(ra, ca.Model)
	for _, cb := range rb.Scope.Run.Conditions {
		if cb.Base != ca.Base || cb.Model == "" || !rb.HasCondition(cb.Name) {
			continue
		}
		for _, id := range modelIdentity(rb, cb.Model) {
			if slices.Contains(idsA, id) {
				return cb.Name, true
			}
		}
	}
	return "", false
}

func conditionOf(r *readmodel.Viewed, name string) (assay.Condition, bool) {
	for _, c := range r.Scope.Run.Conditions {
		if c.Name == name {
			return c, true
		}
	}
	return assay.Condition{}, false
}

// modelIdentity is a run's model named name: its name and its model id.
func modelIdentity(r *readmodel.Viewed, name string) []string {
	ids := []string{name}
	if r.Scope.Run.Config != nil {
		for _, m := range r.Scope.Run.Config.Agent.Models {
			if m.Name == name && m.Model != "" {
				ids = append(ids, m.Model)
			}
		}
	}
	return ids
}
