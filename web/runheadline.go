package web

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/labstack/echo/v4"

	"assay"
	"assay/readmodel"
	"assay/store"
	"assay/templates"
)

// headline is a finished run's main figure, kept on the run: the first
// metric of its report, per condition, with the interval.
type headline struct {
	Metric     string         `json:"metric"`
	Digits     int            `json:"digits"`
	Conditions []headlineCell `json:"conditions"`
}

type headlineCell struct {
	Name string     `json:"name"`
	Mean float64    `json:"mean"`
	CI95 [2]float64 `json:"ci95"`
	N    int        `json:"n"`
}

// headlineOf computes a run's headline from its report; false when the
// run has no score.
func headlineOf(r *readmodel.Viewed) (headline, bool) {
	if len(r.Metrics) == 0 {
		return headline{}, false
	}
	m := r.Metrics[0]
	h := headline{Metric: m.Label(), Digits: m.Digits()}
	for _, c := range r.Summary.Conditions {
		for _, ms := range c.Metrics {
			if ms.Evaluator == m.Evaluator && ms.Name == m.Name {
				h.Conditions = append(h.Conditions, headlineCell{Name: c.Name, Mean: ms.Mean, CI95: ms.CI95, N: ms.N})
			}
		}
	}
	return h, len(h.Conditions) > 0
}

// runHeadline is the headline a finished run keeps, computed and kept the
// first time the list shows the run; nil while the run goes on or has no score.
func (s *Server) runHeadline(ctx context.Context, run *store.Run) (*templates.Headline, error) {
	h, err := s.headlineOf(ctx, run)
	if h == nil || err != nil {
		return nil, err
	}
	v := &templates.Headline{Metric: h.Metric}
	for _, c := range h.Conditions {
		v.Cells = append(v.Cells, templates.HeadlineCell{Condition: c.Name, Mean: fmt.Sprintf("%.*f", h.Digits, c.Mean),
			Title: fmt.Sprintf("%s: %.*f, 95%% CI %.*f–%.*f, n = %d", c.Name, h.Digits, c.Mean, h.Digits, c.CI95[0], h.Digits, c.CI95[1], c.N)})
	}
	return v, nil
}

// headlineOf reads a finished run's headline, or computes and keeps it the
// first time; nil while the run goes on or has no score. A run without a
// score keeps an empty headline: it was computed again, its whole report
// built, each time the runs list was shown (300 such runs: 0.3 s a list).
func (s *Server) headlineOf(ctx context.Context, run *store.Run) (*headline, error) {
	if !run.Status.Finished() {
		return nil, nil
	}
	var h headline
	if run.Headline != "" {
		if err := json.Unmarshal([]byte(run.Headline), &h); err != nil {
			return nil, nil // written by an older version: computed again below on the next change
		}
	} else {
		// The report is kept for the run's pages too: it is built from the
		// whole run, which a list's runs are not (they lack their conditions).
		full, err := s.db.Run(ctx, run.ID)
		if err != nil {
			return nil, err
		}
		sc, err := readmodel.RunScope(ctx, s.db, full)
		if err != nil {
			return nil, err
		}
		r, err := s.model.Report(ctx, sc)
		if err != nil {
			return nil, err
		}
		var ok bool
		if h, ok = headlineOf(r); !ok {
			h = headline{}
		}
		raw, _ := json.Marshal(h)
		if err := s.db.SetRunHeadline(ctx, run.ID, string(raw)); err != nil {
			return nil, err
		}
	}
	if len(h.Conditions) == 0 {
		return nil, nil
	}
	return &h, nil
}

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
