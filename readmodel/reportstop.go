package readmodel

import (
	"fmt"
	"strings"

	"assay/config"
	"assay/report"
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
	rule := f.Rule
	v := &templates.StoppingView{Samples: f.Samples, Of: r.Dataset.Samples, Decided: f.Decided}
	v.Rule = rule.Describe(f.Metric)
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
	for _, iv := range f.Intervals {
		row := templates.StopRow{Label: iv.Condition, Samples: iv.Samples, Mean: num(iv.Mean),
			CS: num(iv.Lo) + " – " + num(iv.Hi)}
		from, to := lo, hi
		if iv.Versus != "" {
			row.Label, row.Pair = iv.Condition+" − "+iv.Versus, true
			from, to = -(hi - lo), hi-lo
			switch {
			case iv.Lo > 0:
				row.Decision = iv.Condition + " ahead"
			case iv.Hi < 0:
				row.Decision = iv.Versus + " ahead"
			case rule.Margin > 0 && iv.Lo > -rule.Margin && iv.Hi < rule.Margin:
				row.Decision = "no difference"
			default:
				row.Decision = "undecided"
			}
		} else if m, ok := usual[iv.Condition]; ok {
			row.CI = num(m.CI95[0]) + " – " + num(m.CI95[1])
		}
		row.Left, row.Mark = pct(iv.Lo, from, to), pct(iv.Mean, from, to)
		row.Width = pct(iv.Hi, from, to) - row.Left
		v.Rows = append(v.Rows, row)
	}
	return v
}
