package web

import (
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"assay"
	"assay/readmodel"
	"assay/templates"
)

// conditionsPage handles GET /conditions.
func (s *Server) conditionsPage(c echo.Context) error {
	list, err := s.db.Conditions(c.Request().Context())
	if err != nil {
		return err
	}
	v := templates.ConditionsView{Page: s.page(c, "Conditions", "conditions")}
	for _, cond := range list {
		v.Conditions = append(v.Conditions, readmodel.ConditionRow(cond))
	}
	return render(c, http.StatusOK, templates.Conditions(v))
}

// newConditionPage handles GET /conditions/new.
func (s *Server) newConditionPage(c echo.Context) error {
	return s.renderConditionForm(c, http.StatusOK, templates.ConditionForm{})
}

// editConditionPage handles GET /conditions/:id/edit.
func (s *Server) editConditionPage(c echo.Context) error {
	id, err := pathID(c)
	if err != nil {
		return err
	}
	cond, err := s.db.Condition(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return s.renderConditionForm(c, http.StatusOK, readmodel.ConditionForm(*cond))
}

func (s *Server) renderConditionForm(c echo.Context, status int, f templates.ConditionForm) error {
	title := "New condition"
	if f.ID != 0 {
		title = "Edit condition " + f.Name
	}
	v := templates.ConditionFormView{Page: s.page(c, title, "conditions"), Form: f}
	return render(c, status, templates.ConditionEdit(v))
}

// createCondition handles POST /conditions.
func (s *Server) createCondition(c echo.Context) error {
	return s.saveCondition(c, 0)
}

// updateCondition handles POST /conditions/:id.
func (s *Server) updateCondition(c echo.Context) error {
	id, err := pathID(c)
	if err != nil {
		return err
	}
	return s.saveCondition(c, id)
}

// saveCondition stores the posted form, or shows it again with the error and the user's input kept.
func (s *Server) saveCondition(c echo.Context, id int64) error {
	ctx := c.Request().Context()
	cond, err := conditionFromForm(c)
	if err == nil {
		cond.ID = id
		if id == 0 {
			err = s.db.CreateCondition(ctx, cond)
		} else {
			err = s.db.UpdateCondition(ctx, cond)
		}
	}
	if err != nil {
		if code := assay.ErrorCode(err); code != assay.EINVALID && code != assay.ECONFLICT {
			return err
		}
		f := formFromPost(c)
		f.ID, f.Error = id, assay.ErrorMessage(err)
		return s.renderConditionForm(c, statusFor(err), f)
	}
	setFlash(c, "ok", fmt.Sprintf("Saved condition %s.", cond.Name))
	return redirect(c, "/conditions")
}

// deleteCondition handles POST /conditions/:id/delete.
func (s *Server) deleteCondition(c echo.Context) error {
	id, err := pathID(c)
	if err != nil {
		return err
	}
	if err := s.db.DeleteCondition(c.Request().Context(), id); err != nil {
		return err
	}
	setFlash(c, "ok", "Deleted the condition. Runs that used it keep their copy.")
	return redirect(c, "/conditions")
}

// formFromPost echoes the posted fields back into the form.
func formFromPost(c echo.Context) templates.ConditionForm {
	form, _ := c.FormParams()
	f := templates.ConditionForm{Name: form.Get("name"), SystemPrompt: form.Get("system_prompt"),
		RequireMCPToolUse: form.Get("require_mcp_tool_use") != "", RequireMCPToolSuccess: form.Get("require_mcp_tool_success") != ""}
	for i := range form["server_name"] {
		f.Servers = append(f.Servers, templates.ServerForm{
			Name:      at(form["server_name"], i),
			Transport: at(form["server_transport"], i),
			Command:   at(form["server_command"], i),
			Args:      at(form["server_args"], i),
			Env:       at(form["server_env"], i),
			URL:       at(form["server_url"], i),
			Headers:   at(form["server_headers"], i),
		})
	}
	return f
}

func at(list []string, i int) string {
	if i < len(list) {
		return list[i]
	}
	return ""
}
