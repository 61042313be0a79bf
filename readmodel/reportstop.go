package readmodel

import (
	"fmt"
	"strings"

	"assay/config"
	"assay/report"
	"assay/stop"
	"assay/store"
	"assay/templates"
)

// stoppingView shapes a run's stopping rule for its report: nil for a run
// without one.
func (r *Viewed) stoppingView() *templates.StoppingView {
	f := r.Summary.Stopping
	if f == nil {
		return nil
	}
	v := &templates.StoppingView{Samples: f.Samples, Of: r.Dataset.Samples, Decided: f.Decided}
	v.Rule = f.Rule.Describe(f.Metric)
	if st := f.Stopped; st != nil {
		v.Reason, v.Of = st.Reason, st.OfSamples
		if st.Extended {
			v.Extended = true
		} else {
			v.Stopped, v.Samples, v.Held, v.At = true, st.Samples, st.DecidedAt, templates.When(st.At)
			saved := []string{templates.Count(st.SavedCalls, "model call"), templates.Count(st.SavedTasks, "answer")}
			if st.SavedUSD > 0 {
				saved = append(saved, fmt.Sprintf("about $%.2f at the estimate's prices", st.SavedUSD))
			}
			v.Saved = strings.Join(saved, ", ")
		}
	}
	if f.Stopped == nil && r.Run.Status == store.RunCompleted && f.Samples >= r.Dataset.Samples {
		v.Ran = true
	}
	v.Rows = r.stopRows(f)
	return v
}

// stopRows are the stopping rule's sequences: each condition's interval
// beside the usual one, and each pair's with what it decided, placed on
// the metric's scale.
func (r *Viewed) stopRows(f *stop.Figures) []templates.StopRow {
	var scale config.Scale
	digits := 3
	for _, m := range r.Metrics {
		if m.Name == f.Metric {
			scale, digits = m.Scale, m.Digits()
		}
	}
	lo, hi := scale.Bounds()
	num := func(x float64) string { return fmt.Sprintf("%.*f", digits, x) }
	usual := map[string]report.MetricSummary{}
	for _, c := range r.Summary.Conditions {
		for _, m := range c.Metrics {
			if m.Name == f.Metric {
				usual[c.Name] = m
			}
		}
	}
	pct := func(x, from, to float64) float64 { return 100 * min(max((x-from)/(to-from), 0), 1) }
	var rows []templates.StopRow
	for _, iv := range f.Intervals {
		row := templates.StopRow{Label: iv.Condition, Samples: iv.Samples, Mean: num(iv.Mean),
			CS: num(iv.Lo) + " – " + num(iv.Hi)}
		from, to := lo, hi
		if iv.Versus != "" {
			row.Label, row.Pair = iv.Condition+" − "+iv.Versus, true
			from, to = -(hi - lo), hi-lo
			row.Decision = pairDecision(iv, f.Rule.Margin)
		} else if m, ok := usual[iv.Condition]; ok {
			row.CI = num(m.CI95[0]) + " – " + num(m.CI95[1])
		}
		row.Left, row.Mark = pct(iv.Lo, from, to), pct(iv.Mean, from, to)
		row.Width = pct(iv.Hi, from, to) - row.Left
		rows = append(rows, row)
	}
	return rows
}

// pairDecision is what a pair's interval decided.
func pairDecision(iv stop.Interval, margin float64) string {
	switch {
	case iv.Lo > 0:
		return iv.Condition + " ahead"
	case iv.Hi < 0:
		return iv.Versus + " ahead"
	case margin > 0 && iv.Lo > -margin && iv.Hi < margin:
		return "no difference"
	}
	return "undecided"
}
