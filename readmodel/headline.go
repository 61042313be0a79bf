package readmodel

import (
	"assay/store"
	"assay/templates"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Headline is a finished run's main figure, kept on the run: the first
// metric of its report, per condition, with the interval.
type Headline struct {
	Metric     string         `json:"metric"`
	Digits     int            `json:"digits"`
	Conditions []HeadlineCell `json:"conditions"`
}

type HeadlineCell struct {
	Name string     `json:"name"`
	Mean float64    `json:"mean"`
	CI95 [2]float64 `json:"ci95"`
	N    int        `json:"n"`
}

// headlineOfReport computes a run's headline from its report; false when the
// run has no score.
func headlineOfReport(r *Viewed) (Headline, bool) {
	if len(r.Metrics) == 0 {
		return Headline{}, false
	}
	m := r.Metrics[0]
	h := Headline{Metric: m.Label(), Digits: m.Digits()}
	for _, c := range r.Summary.Conditions {
		for _, ms := range c.Metrics {
			if ms.Evaluator == m.Evaluator && ms.Name == m.Name {
				h.Conditions = append(h.Conditions, HeadlineCell{Name: c.Name, Mean: ms.Mean, CI95: ms.CI95, N: ms.N})
			}
		}
	}
	return h, len(h.Conditions) > 0
}

// HeadlineView is the headline a finished run keeps, computed and kept the
// first time the list shows the run; nil while the run goes on or has no score.
func (m *Model) HeadlineView(ctx context.Context, run *store.Run) (*templates.Headline, error) {
	h, err := m.Headline(ctx, run)
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

// Headline reads a finished run's headline, or computes and keeps it the
// first time; nil while the run goes on or has no score. A run without a
// score keeps an empty headline: it was computed again, its whole report
// built, each time the runs list was shown (300 such runs: 0.3 s a list).
func (m *Model) Headline(ctx context.Context, run *store.Run) (*Headline, error) {
	if !run.Status.Finished() {
		return nil, nil
	}
	var h Headline
	if run.Headline != "" {
		if err := json.Unmarshal([]byte(run.Headline), &h); err != nil {
			return nil, nil // written by an older version: computed again below on the next change
		}
	} else {
		// The report is kept for the run's pages too: it is built from the
		// whole run, which a list's runs are not (they lack their conditions).
		full, err := m.db.Run(ctx, run.ID)
		if err != nil {
			return nil, err
		}
		sc, err := RunScope(ctx, m.db, full)
		if err != nil {
			return nil, err
		}
		r, err := m.Report(ctx, sc)
		if err != nil {
			return nil, err
		}
		var ok bool
		if h, ok = headlineOfReport(r); !ok {
			h = Headline{}
		}
		raw, _ := json.Marshal(h)
		if err := m.db.SetRunHeadline(ctx, run.ID, string(raw)); err != nil {
			return nil, err
		}
	}
	if len(h.Conditions) == 0 {
		return nil, nil
	}
	return &h, nil
}

// leaderRows is how many rows a leaderboard shows: the best. A dataset
// that CI runs against gathers thousands of runs.
const leaderRows = 25

// Leaderboards ranks a dataset's finished runs by their headline metrics:
// one board per metric, every run's every condition (and model) on it,
// best first.
func (m *Model) Leaderboards(ctx context.Context, datasetID int64) ([]templates.Leaderboard, error) {
	runs, err := m.db.DatasetRuns(ctx, datasetID, 0)
	if err != nil {
		return nil, err
	}
	boards := map[string]*templates.Leaderboard{}
	var order []string
	type ranked struct {
		row   templates.LeaderRow
		value float64
	}
	rows := map[string][]ranked{}
	for i := range runs {
		run := &runs[i]
		if !run.Status.Finished() {
			continue
		}
		h, err := m.Headline(ctx, run)
		if err != nil {
			return nil, err
		}
		if h == nil {
			continue
		}
		if _, ok := boards[h.Metric]; !ok {
			boards[h.Metric] = &templates.Leaderboard{Metric: h.Metric}
			order = append(order, h.Metric)
		}
		agent := agentOf(run)
		for _, c := range h.Conditions {
			rows[h.Metric] = append(rows[h.Metric], ranked{templates.LeaderRow{RunID: run.ID, Run: run.Name, Agent: agent,
				Condition: c.Name, Mean: fmt.Sprintf("%.*f", h.Digits, c.Mean),
				CI: fmt.Sprintf("%.*f – %.*f", h.Digits, c.CI95[0], h.Digits, c.CI95[1]), N: c.N,
				Created: templates.When(run.CreatedAt)}, c.Mean})
		}
	}
	var out []templates.Leaderboard
	for _, m := range order {
		list := rows[m]
		slices.SortStableFunc(list, func(a, b ranked) int { return cmp.Compare(b.value, a.value) })
		b := boards[m]
		b.Total = len(list)
		for _, r := range list[:min(len(list), leaderRows)] {
			b.Rows = append(b.Rows, r.row)
		}
		out = append(out, *b)
	}
	return out, nil
}

// agentOf names a run's agent: its model, or its models.
func agentOf(run *store.Run) string {
	cfg := run.Config
	if cfg == nil { // its config cannot be read
		return ""
	}
	if len(cfg.Agent.Models) > 0 {
		var names []string
		for _, m := range cfg.Agent.Models {
			names = append(names, m.Name)
		}
		return strings.Join(names, ", ")
	}
	if cfg.Agent.Model != "" {
		return cfg.Agent.Model
	}
	return string(cfg.Agent.Type)
}
