package web

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"assay"
	"assay/eee"
	"assay/templates"
)

// importRun handles POST /runs/import: a finished run from EEE result files.
func (s *Server) importRun(c echo.Context) error {
	out, err := s.importEEE(c)
	if err != nil {
		return s.renderRuns(c, statusFor(err), templates.ImportForm{Error: importMessage(err)})
	}
	if out.Existing {
		setFlash(c, "ok", "These files were imported before, as this run: nothing new was stored.")
		return redirect(c, fmt.Sprintf("/runs/%d", out.RunID))
	}
	msg := fmt.Sprintf("Imported %s results of %q: finished and read-only.", templates.Int(out.Results), out.Name)
	if out.UnreadFields > 0 {
		msg += fmt.Sprintf(" %s the files hold that assay does not read %s kept with the run, in its JSON export.",
			templates.Count(out.UnreadFields, "field"), map[bool]string{true: "is", false: "are"}[out.UnreadFields == 1])
	}
	setFlash(c, "ok", msg)
	return redirect(c, fmt.Sprintf("/runs/%d", out.RunID))
}

// apiImportRun handles POST /api/runs/import, with the same two files.
func (s *Server) apiImportRun(c echo.Context) error {
	out, err := s.importEEE(c)
	if err != nil {
		return err
	}
	if out.Existing {
		return c.JSON(http.StatusOK, out)
	}
	return c.JSON(http.StatusCreated, out)
}

// importEEE reads the "results" and "instances" parts of a multipart
// request, each within the upload limit, and imports the run.
func (s *Server) importEEE(c echo.Context) (*eee.Imported, error) {
	var f eee.Files
	var instances []byte
	for _, part := range []struct {
		field string
		name  *string
		data  *[]byte
	}{{"results", &f.ResultsName, &f.Results}, {"instances", &f.InstancesName, &instances}} {
		fh, err := formFile(c, part.field)
		if errors.Is(err, http.ErrMissingFile) {
			return nil, assay.Errorf(assay.EINVALID, "Choose both files: the aggregate results (.json) and the instances (.jsonl).")
		} else if err != nil {
			return nil, formFileError(err, s.cfg.MaxUpload)
		}
		if *part.data, err = readUpload(fh, s.cfg.MaxUpload); err != nil {
			return nil, err
		}
		*part.name = fh.Filename
	}
	f.Instances = eee.Bytes(instances)
	return eee.Import(c.Request().Context(), s.db, f)
}

func importMessage(err error) string {
	if assay.ErrorCode(err) == assay.EINTERNAL {
		return "The run could not be stored; nothing was imported."
	}
	return assay.ErrorMessage(err) + " Nothing was imported."
}
