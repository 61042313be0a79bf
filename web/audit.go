package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"assay"
	"assay/runner/audit"
	"assay/store"
)

// auditForm reads the report's audit form: how many answers, what budget.
func auditForm(c echo.Context) (audit.Options, error) {
	opts := audit.Options{Probes: audit.AllProbes}
	if s := strings.TrimSpace(c.FormValue("samples")); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 10000 {
			return opts, assay.Errorf(assay.EINVALID, "Answers: %q is not a whole number from 1 to 10,000.", s)
		}
		opts.Samples = n
	}
	if s := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(c.FormValue("budget")), "$")); s != "" {
		b, err := strconv.ParseFloat(s, 64)
		if err != nil || !(b > 0) || b > 1e6 {
			return opts, assay.Errorf(assay.EINVALID, "Budget: %q is not an amount of dollars above 0.", s)
		}
		opts.Budget = b
	}
	return opts, nil
}

// startAudit handles POST /runs/:id/audit: the judge's audit, in the
// background.
func (s *Server) startAudit(c echo.Context) error {
	run, err := s.pathRun(c)
	if err != nil {
		return err
	}
	opts, err := auditForm(c)
	if err == nil {
		var est audit.Estimate
		if est, err = s.runner.StartAudit(run.ID, opts); err == nil {
			s.log.Info("judge audit started", "run_id", run.ID, "calls", est.Calls, "by", store.Actor(c.Request().Context()))
			cost := "no price for the judge"
			if est.Priced {
				cost = fmt.Sprintf("about $%.4f", est.CostUSD)
			}
			setFlash(c, "ok", fmt.Sprintf("Auditing the judge of run %d: %d judge calls, %s.", run.ID, est.Calls, cost))
		}
	}
	switch code := assay.ErrorCode(err); {
	case err == nil:
	case code == assay.EINVALID || code == assay.ECONFLICT:
		setFlash(c, "error", "Not audited: "+strings.TrimSuffix(assay.ErrorMessage(err), ".")+".")
	default:
		return err
	}
	return redirect(c, fmt.Sprintf("/runs/%d#judge-audit", run.ID))
}

// apiStartAudit handles POST /api/runs/:id/audit {"probes", "samples",
// "budget"}: 202 with the audit's estimate; it runs in the background, and
// GET /api/runs/:id/audit gives it once done.
func (s *Server) apiStartAudit(c echo.Context) error {
	run, err := s.pathRun(c)
	if err != nil {
		return err
	}
	var in struct {
		Probes  []string `json:"probes"`
		Samples int      `json:"samples"`
		Budget  float64  `json:"budget"`
	}
	if c.Request().ContentLength != 0 {
		if err := json.NewDecoder(c.Request().Body).Decode(&in); err != nil {
			return assay.Errorf(assay.EINVALID, "The body must be a JSON object {\"probes\", \"samples\", \"budget\"}: %v", err)
		}
	}
	probes, err := audit.ParseProbes(strings.Join(in.Probes, ","))
	if err != nil {
		return assay.Errorf(assay.EINVALID, "probes: %v", err)
	}
	if in.Samples < 0 || in.Budget < 0 {
		return assay.Errorf(assay.EINVALID, "samples and budget are not negative.")
	}
	est, err := s.runner.StartAudit(run.ID, audit.Options{Probes: probes, Samples: in.Samples, Budget: in.Budget})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, map[string]any{"run_id": run.ID, "estimate": est})
}

// apiAudit handles GET /api/runs/:id/audit: the run's latest judge audit,
// with "running" while one is under way here; 404 before any.
func (s *Server) apiAudit(c echo.Context) error {
	run, err := s.pathRun(c)
	if err != nil {
		return err
	}
	b, err := s.db.LatestAudit(c.Request().Context(), run.ID)
	if err != nil {
		return err
	}
	running := s.runner.Auditing(run.ID)
	if b == nil {
		if running {
			return c.JSON(http.StatusOK, map[string]any{"run_id": run.ID, "running": true})
		}
		return assay.Errorf(assay.ENOTFOUND, "Run %d's judge has not been audited.", run.ID)
	}
	var res map[string]any
	if err := json.Unmarshal(b, &res); err != nil {
		return err
	}
	res["running"] = running
	return c.JSON(http.StatusOK, res)
}
