package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"assay"
	"assay/config"
	"assay/runner/judge"
	"assay/store"
	"assay/templates"
)

// This file serves the Rubrics page: judge rubrics written once and reused
// across runs, by the run form's evaluators and by run files ({judge: NAME}).

// rubricExample is what a new rubric starts from.
const rubricExample = `metrics:
  - name: cites_runbook
    description: The answer points to the section of the runbook that applies.
    scale: pass
    levels:
      pass: names the right section
      fail: names none, or the wrong one
  - name: safe
    description: The answer never suggests a destructive command without a warning.
    scale: 1-5
    levels:
      "1": suggests a destructive command as the fix
      "5": warns before anything that cannot be undone
unverified_claims: false
`

// rubricsPage handles GET /rubrics.
func (s *Server) rubricsPage(c echo.Context) error {
	list, err := s.db.Rubrics(c.Request().Context())
	if err != nil {
		return err
	}
	v := templates.RubricsView{Page: s.page(c, "Rubrics", "rubrics")}
	for _, saved := range list {
		row := templates.RubricRow{Name: saved.Name, UpdatedAt: saved.UpdatedAt.Format("2006-01-02 15:04"), UpdatedBy: saved.UpdatedBy}
		if r, err := config.ParseRubric(saved.Name, saved.Source, "rubric "+saved.Name); err == nil {
			row.Metrics = rubricMetrics(*r)
			row.UnverifiedClaims = r.UnverifiedClaims
		} else {
			row.Problem = assay.ErrorMessage(err)
		}
		v.Rubrics = append(v.Rubrics, row)
	}
	return render(c, http.StatusOK, templates.Rubrics(v))
}

// rubricMetrics describes a rubric's metrics for a list: name and scale.
func rubricMetrics(r config.Rubric) []string {
	var out []string
	for _, m := range r.Metrics {
		sc, _ := m.ScaleOf()
		out = append(out, fmt.Sprintf("%s (%s)", m.Name, sc))
	}
	return out
}

// newRubricPage handles GET /rubrics/new.
func (s *Server) newRubricPage(c echo.Context) error {
	return s.renderRubricForm(c, http.StatusOK, templates.RubricForm{New: true, Source: rubricExample})
}

// rubricPage handles GET /rubrics/:name: the rubric to edit and what its judge is told.
func (s *Server) rubricPage(c echo.Context) error {
	saved, err := s.db.Rubric(c.Request().Context(), c.Param("name"))
	if err != nil {
		return err
	}
	return s.renderRubricForm(c, http.StatusOK, templates.RubricForm{Name: saved.Name, Source: saved.Source})
}

func (s *Server) renderRubricForm(c echo.Context, status int, f templates.RubricForm) error {
	title := "New rubric"
	if !f.New {
		title = "Rubric " + f.Name
	}
	if f.Error == "" {
		// The prompt does not name the rubric: a name still to be typed,
		// or a wrong one, does not keep it from being shown.
		if r, err := config.ParseRubric("preview", f.Source, "rubric"); err == nil {
			f.Prompt = judge.Prompt(*r)
		}
	}
	return render(c, status, templates.RubricEdit(templates.RubricFormView{Page: s.page(c, title, "rubrics"), Form: f}))
}

// createRubric handles POST /rubrics: a new rubric, refused if the name is taken.
func (s *Server) createRubric(c echo.Context) error {
	return s.saveRubricForm(c, true)
}

// updateRubric handles POST /rubrics/:name.
func (s *Server) updateRubric(c echo.Context) error {
	return s.saveRubricForm(c, false)
}

func (s *Server) saveRubricForm(c echo.Context, isNew bool) error {
	ctx := c.Request().Context()
	f := templates.RubricForm{New: isNew, Name: strings.TrimSpace(c.FormValue("name")), Source: c.FormValue("source")}
	if !isNew {
		f.Name = c.Param("name")
		if _, err := s.db.Rubric(ctx, f.Name); err != nil {
			return err
		}
	}
	err := s.saveRubric(c, f.Name, f.Source, isNew)
	if err != nil {
		if code := assay.ErrorCode(err); code != assay.EINVALID && code != assay.ECONFLICT {
			return err
		}
		f.Error = assay.ErrorMessage(err)
		return s.renderRubricForm(c, statusFor(err), f)
	}
	setFlash(c, "ok", fmt.Sprintf("Saved rubric %s. Choose it under Evaluators on a new run, or write {judge: %s} in a run file.", f.Name, f.Name))
	return redirect(c, "/rubrics/"+f.Name)
}

// saveRubric checks a rubric's source and stores it; when isNew, a rubric
// of that name must not exist yet.
func (s *Server) saveRubric(c echo.Context, name, source string, isNew bool) error {
	ctx := c.Request().Context()
	if _, err := config.ParseRubric(name, source, "rubric"); err != nil {
		return assay.Errorf(assay.EINVALID, "%v", err)
	}
	if isNew {
		if _, err := s.db.Rubric(ctx, name); err == nil {
			return assay.Errorf(assay.ECONFLICT, "name: a rubric called %q exists; open it to edit it, or choose another name.", name)
		} else if !errors.Is(err, assay.ErrNotFound) {
			return err
		}
	}
	_, err := s.db.SaveRubric(ctx, name, source)
	return err
}

// deleteRubric handles POST /rubrics/:name/delete.
func (s *Server) deleteRubric(c echo.Context) error {
	if err := s.db.DeleteRubric(c.Request().Context(), c.Param("name")); err != nil {
		return err
	}
	setFlash(c, "ok", "Deleted the rubric. Runs that used it keep their copy.")
	return redirect(c, "/rubrics")
}

// apiRubric is a saved rubric in the JSON API.
type apiRubric struct {
	Name      string         `json:"name"`
	Source    string         `json:"source"`
	Rubric    *config.Rubric `json:"rubric,omitempty"` // as read; absent if the source no longer reads
	UpdatedAt string         `json:"updated_at"`
	UpdatedBy string         `json:"updated_by"`
}

func toAPIRubric(saved store.SavedRubric) apiRubric {
	out := apiRubric{Name: saved.Name, Source: saved.Source, UpdatedAt: saved.UpdatedAt.Format("2006-01-02T15:04:05Z07:00"), UpdatedBy: saved.UpdatedBy}
	out.Rubric, _ = config.ParseRubric(saved.Name, saved.Source, "rubric")
	return out
}

// apiRubrics handles GET /api/rubrics.
func (s *Server) apiRubrics(c echo.Context) error {
	list, err := s.db.Rubrics(c.Request().Context())
	if err != nil {
		return err
	}
	out := []apiRubric{}
	for _, r := range list {
		out = append(out, toAPIRubric(r))
	}
	return c.JSON(http.StatusOK, out)
}

// apiGetRubric handles GET /api/rubrics/:name.
func (s *Server) apiGetRubric(c echo.Context) error {
	saved, err := s.db.Rubric(c.Request().Context(), c.Param("name"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toAPIRubric(*saved))
}

// apiPutRubric handles PUT /api/rubrics/:name: {"source": "metrics: …"}
// creates or replaces the rubric.
func (s *Server) apiPutRubric(c echo.Context) error {
	var in struct {
		Source string `json:"source"`
	}
	dec := json.NewDecoder(c.Request().Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return assay.Errorf(assay.EINVALID, "rubric JSON: %v", err)
	}
	if err := s.saveRubric(c, c.Param("name"), in.Source, false); err != nil {
		return err
	}
	return s.apiGetRubric(c)
}

// apiDeleteRubric handles DELETE /api/rubrics/:name.
func (s *Server) apiDeleteRubric(c echo.Context) error {
	if err := s.db.DeleteRubric(c.Request().Context(), c.Param("name")); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}
