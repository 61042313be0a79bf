package readmodel

import (
	"fmt"
	"math"
	"net/url"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"assay/report"
	"assay/templates"
)

// reviewView is the report's section on reviews: coverage, agreement per
// metric, the confusion heatmaps, and the switch between the summary as
// judged and with reviews applied.
func (r *Viewed) reviewView(q Query, shared bool) *templates.ReviewView {
	rv := r.Reviews
	v := &templates.ReviewView{Verdicts: rv.Verdicts, Scored: rv.Scored, Overridden: rv.Overridden, Applied: r.View == report.Reviewed}
	if !shared {
		v.Reviewers = rv.Reviewers
	}
	judged, applied := q, q
	judged.View, applied.View = "", "reviewed"
	v.AsJudgedURL, v.AppliedURL = r.Scope.Base+judged.encode(), r.Scope.Base+applied.encode()
	for _, c := range rv.Coverage {
		v.Coverage = append(v.Coverage, templates.CoverageRow{Metric: c.Metric.Label(), Condition: c.Condition, Reviewed: c.Reviewed,
			Total: c.Total, Share: percent(c.Reviewed, c.Total)})
	}
	for i, a := range rv.Agreement {
		row := templates.AgreementRow{Metric: a.Metric.Label(), Reviewed: a.Reviewed, Overridden: a.Overridden,
			Exact: pct(a.Exact), MAD: fmt.Sprintf("%.2f", a.MAD), JudgeMean: fmt.Sprintf("%.*f", a.Metric.Digits(), a.JudgeMean),
			HumanMean: fmt.Sprintf("%.*f", a.Metric.Digits(), a.HumanMean), Kappa: "—", Alpha: "—"}
		if a.Within1 != nil {
			row.Within1 = pct(*a.Within1)
		}
		if a.Reviewed < report.MinKappaReviews {
			row.Kappa = "too few reviews"
		}
		if a.Kappa != nil {
			row.Kappa = fmt.Sprintf("%.2f", *a.Kappa)
			row.KappaCI = fmt.Sprintf("[%.2f, %.2f]", a.KappaCI95[0], a.KappaCI95[1])
		}
		if a.Alpha != nil {
			row.Alpha = fmt.Sprintf("%.2f", *a.Alpha)
			row.AlphaN = a.MultiReviewed
		}
		v.Agreement = append(v.Agreement, row)
		v.Heatmaps = append(v.Heatmaps, confusionChart(i, a))
	}
	for i, e := range rv.JudgeErrors {
		v.JudgeErrors = append(v.JudgeErrors, judgeErrorsView(i, e))
	}
	return v
}

func percent(n, total int) string {
	if total == 0 {
		return "—"
	}
	return fmt.Sprintf("%.0f%%", 100*float64(n)/float64(total))
}

func pct(share float64) string { return fmt.Sprintf("%.0f%%", 100*share) }

// confusionChart is a metric's judge value × reviewer value heatmap.
func confusionChart(i int, a report.Agreement) templates.ChartView {
	labels := make([]string, len(a.Categories))
	for j, c := range a.Categories {
		labels[j] = Score(c)
	}
	hm := charts.NewHeatMap()
	most := 1
	var data []opts.HeatMapData
	for y := range a.Confusion {
		for x, n := range a.Confusion[y] {
			most = max(most, n)
			if n > 0 {
				data = append(data, opts.HeatMapData{Value: [3]any{x, y, n}})
			}
		}
	}
	title := a.Metric.Label() + ": judge against reviewers"
	hm.SetGlobalOptions(append(common(title, fmt.Sprintf("%d reviewed scores; the diagonal is agreement", a.Reviewed), "item"),
		charts.WithXAxisOpts(xAxis("reviewer's value", opts.XAxis{Type: "category", Data: labels, SplitArea: &opts.SplitArea{Show: opts.Bool(true)}})),
		charts.WithYAxisOpts(yAxis("judge's value", opts.YAxis{Type: "category", Data: labels, SplitArea: &opts.SplitArea{Show: opts.Bool(true)}})),
		charts.WithVisualMapOpts(opts.VisualMap{Min: 0, Max: float32(most), Calculable: opts.Bool(false), Orient: "horizontal",
			Left: "center", Bottom: "0", Show: opts.Bool(false),
			InRange: &opts.VisualMapInRange{Color: []string{"#eef2fb", "#2f5bd3"}}}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(false)}),
	)...)
	hm.AddSeries("scores", data, charts.WithLabelOpts(opts.Label{Show: opts.Bool(true)}))
	return chartView(fmt.Sprintf("chart-confusion-%d", i),
		"Each cell counts the reviewed scores with that judge value (row) and reviewer value (column), taking each score's latest verdict.", hm)
}

// encode is the query string of a report view, "" when it has none.
func (q Query) encode() string {
	v := url.Values{}
	if q.A != "" {
		v.Set("a", q.A)
	}
	if q.B != "" {
		v.Set("b", q.B)
	}
	if q.View != "" {
		v.Set("view", q.View)
	}
	if q.Delta != "" {
		v.Set("delta", q.Delta)
	}
	if q.Slice != "" {
		v.Set("slice", q.Slice)
	}
	if q.Judge != "" {
		v.Set("judge", q.Judge)
	}
	if len(v) == 0 {
		return ""
	}
	return "?" + v.Encode()
}

// judgeErrorsView shows where a panel's judges err against people on one
// metric, and says whether averaging them corrects them.
func judgeErrorsView(i int, e report.JudgeErrors) templates.JudgeErrorsView {
	v := templates.JudgeErrorsView{ID: fmt.Sprint(i), Metric: e.Metric.Label(), Judges: e.Judges,
		PanelAbsError: fmt.Sprintf("%.2f", e.PanelAbsError)}
	most := math.Inf(-1)
	for j, name := range e.Judges {
		row := templates.JudgeErrorRow{Judge: name, MeanError: fmt.Sprintf("%+.2f", e.MeanError[j]), MeanAbsError: fmt.Sprintf("%.2f", e.MeanAbsError[j])}
		for k, r := range e.Matrix[j] {
			cell := "—"
			if r != nil {
				cell = fmt.Sprintf("%.2f", *r)
				if k != j {
					most = max(most, *r)
				}
			}
			row.Correlations = append(row.Correlations, cell)
		}
		v.Rows = append(v.Rows, row)
	}
	together := ""
	if !math.IsInf(most, -1) {
		together = fmt.Sprintf(" (the most alike, r %.2f)", most)
	}
	if e.PanelBetter {
		v.Verdict = fmt.Sprintf("Over %s people scored, the panel's mean errs by %.2f on average, less than its best judge (%s, %.2f): its judges' errors are not all alike%s, and averaging them corrects some.",
			templates.Count(e.N, "answer"), e.PanelAbsError, e.BestJudge, e.BestAbsError, together)
	} else {
		v.Verdict = fmt.Sprintf("Over %s people scored, the panel's mean errs by %.2f on average, no less than its best judge (%s, %.2f): its judges err together%s, and averaging them corrects nothing.",
			templates.Count(e.N, "answer"), e.PanelAbsError, e.BestJudge, e.BestAbsError, together)
	}
	if e.MeanCorrelation != nil {
		v.Verdict += fmt.Sprintf(" With their errors' mean correlation %.2f, its %d judges are worth %.1f independent ones.",
			*e.MeanCorrelation, len(e.Judges), e.EffectiveJudges)
	}
	return v
}
