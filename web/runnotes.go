package web

import (
	"fmt"
	"strings"

	"github.com/labstack/echo/v4"

	"assay"
	"assay/store"
)

// matchesRun reports whether a run is found by a search of the runs list:
// every word of q in its name, tags, note, dataset or conditions.
func matchesRun(r store.RunText, q string) bool {
	var hay []string
	hay = append(hay, r.Name, r.Note, r.DatasetName, fmt.Sprintf("#%d", r.ID))
	hay = append(hay, r.Tags...)
	hay = append(hay, r.ConditionNames...)
	text := strings.ToLower(strings.Join(hay, " \n "))
	for _, w := range strings.Fields(strings.ToLower(q)) {
		if !strings.Contains(text, w) {
			return false
		}
	}
	return true
}

// setRunNotes handles POST /runs/:id/notes: the run's tags and note.
func (s *Server) setRunNotes(c echo.Context) error {
	run, err := s.pathRun(c)
	if err != nil {
		return err
	}
	if err := s.db.SetRunNotes(c.Request().Context(), run.ID, store.SplitTags(c.FormValue("tags")), c.FormValue("note")); err != nil {
		if assay.ErrorCode(err) != assay.EINVALID {
			return err
		}
		setFlash(c, "error", assay.ErrorMessage(err))
	} else {
		setFlash(c, "ok", "Saved the run's tags and note.")
	}
	return redirect(c, fmt.Sprintf("/runs/%d#about-run", run.ID))
}
