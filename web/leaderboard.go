package web

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"assay/store"
	"assay/templates"
)

// leaderRows is how many rows a leaderboard shows: the best. A dataset
// that CI runs against gathers thousands of runs.
const leaderRows = 25

// leaderboards ranks a dataset's finished runs by their headline metrics:
// one board per metric, every run's every condition (and model) on it,
// best first.
func (s *Server) leaderboards(ctx context.Context, datasetID int64) ([]templates.Leaderboard, error) {
	runs, err := s.db.DatasetRuns(ctx, datasetID, 0)
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
		h, err := s.headlineOf(ctx, run)
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
