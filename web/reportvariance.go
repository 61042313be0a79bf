package web

import (
	"fmt"
	"slices"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"assay/report"
	"assay/templates"
)

// This file builds the report's section "Where the variance comes from":
// each metric's variance under each condition split into samples, agent and
// judge, what dominates, the judge against itself, and the smallest
// difference the run can detect.

// The colours of the three parts, the same in every chart.
var partColours = map[string]string{"sample": "#5b7db1", "agent": "#e0973a", "judge": "#c4455a"}

// addSentence adds what dominates a metric's spread under a condition, to
// the sentence other conditions share when it is the same: a sweep of
// twenty conditions said the same thing sixty times.
func addSentence(out []templates.VarianceSentence, condition, text string) []templates.VarianceSentence {
	for i := range out {
		if out[i].Text == text {
			out[i].Conditions = append(out[i].Conditions, condition)
			return out
		}
	}
	return append(out, templates.VarianceSentence{Conditions: []string{condition}, Text: text})
}

// varianceView is the section; nil when no metric has two samples scored.
func (r *viewed) varianceView() *templates.VarianceView {
	v := &templates.VarianceView{FirstCondition: r.Conditions[0], JudgeRepetitions: max(r.Config.JudgeRepetitions, 1)}
	for _, c := range r.Summary.Conditions {
		for _, m := range c.Metrics {
			va := m.Variance
			if va == nil || m.Samples < 2 {
				continue
			}
			metric := r.Metrics[r.MetricIndex(m.Evaluator, m.Name)]
			d := metric.Digits()
			s, a, j := va.Shares()
			row := templates.VarianceRow{
				Condition: c.Name, Metric: metricHead(metric).Label(),
				Total:         fmt.Sprintf("%.*f", d, va.Total),
				Sample:        shareCell(s, va.SharesCI95["sample"], true),
				Agent:         shareCell(a, va.SharesCI95["agent"], va.AgentMeasured),
				Judge:         shareCell(j, va.SharesCI95["judge"], va.JudgeMeasured),
				AgentMeasured: va.AgentMeasured, JudgeMeasured: va.JudgeMeasured,
			}
			if m.MDD != nil {
				row.MDD = fmt.Sprintf("%.*f", d, *m.MDD)
			}
			v.Rows = append(v.Rows, row)
			v.Sentences = addSentence(v.Sentences, c.Name, va.Sentence(metricHead(metric).Label()))
			if note := va.Unmeasured(); note != "" && !slices.Contains(v.Notes, note) {
				v.Notes = append(v.Notes, note)
			}
			if len(m.Judges) > 0 {
				pr := templates.PanelRow{Condition: c.Name, Metric: row.Metric, Alpha: "—"}
				for _, j := range m.Judges {
					pr.Means = append(pr.Means, fmt.Sprintf("%.*f", d, j.Mean))
					pr.Offsets = append(pr.Offsets, templates.Signed(j.Offset, d))
				}
				if m.JudgeAlpha != nil {
					pr.Alpha = fmt.Sprintf("%.3f", *m.JudgeAlpha)
				}
				if len(v.PanelJudges) == 0 {
					for _, j := range m.Judges {
						v.PanelJudges = append(v.PanelJudges, j.Name)
					}
				}
				v.Panel = append(v.Panel, pr)
			}
			if jc := m.JudgeConsistency; jc != nil {
				cr := templates.ConsistencyRow{Metric: row.Metric, Condition: c.Name, Answers: jc.Answers,
					Exact: templates.Pct(jc.Exact), MAD: fmt.Sprintf("%.*f", d, jc.MAD), Alpha: "—"}
				if jc.Alpha != nil {
					cr.Alpha = fmt.Sprintf("%.3f", *jc.Alpha)
				}
				v.Consistency = append(v.Consistency, cr)
			}
		}
	}
	if len(v.Rows) == 0 {
		return nil
	}
	for i := range v.Sentences {
		v.Sentences[i].Every = len(v.Sentences[i].Conditions) == len(r.Summary.Conditions)
	}
	for i, c := range r.Summary.Conditions {
		if ch, ok := r.varianceChart(c, fmt.Sprintf("chart-variance-%d", i+1)); ok {
			v.Charts = append(v.Charts, ch)
		}
	}
	return v
}

// shareCell is a share with its interval: "62% (48–75%)"; "—" when the
// part is not measured.
func shareCell(share float64, ci [2]float64, measured bool) string {
	if !measured {
		return "—"
	}
	return fmt.Sprintf("%.0f%% (%.0f–%.0f%%)", 100*share, 100*ci[0], 100*ci[1])
}

// varianceChart stacks, per metric of one condition, the shares of the
// three parts.
func (r *viewed) varianceChart(c report.ConditionSummary, id string) (templates.ChartView, bool) {
	var labels []string
	parts := map[string][]float64{}
	for _, m := range c.Metrics {
		if m.Variance == nil || m.Samples < 2 {
			continue
		}
		s, a, j := m.Variance.Shares()
		labels = append(labels, m.Name)
		parts["sample"] = append(parts["sample"], report.Round(100*s, 1))
		parts["agent"] = append(parts["agent"], report.Round(100*a, 1))
		parts["judge"] = append(parts["judge"], report.Round(100*j, 1))
	}
	if len(labels) == 0 {
		return templates.ChartView{}, false
	}
	bar := charts.NewBar()
	bar.SetGlobalOptions(append(common("Where the variance comes from: "+c.Name, "share of each metric's variance", "axis"),
		charts.WithXAxisOpts(metricAxis()),
		charts.WithYAxisOpts(yAxis("% of the variance", opts.YAxis{Min: 0, Max: 100})))...)
	bar.SetXAxis(labels)
	for _, part := range []string{"sample", "agent", "judge"} {
		colour := partColours[part]
		bar.AddSeries(part, barData(parts[part]), charts.WithSeriesOpts(func(s *charts.SingleSeries) {
			s.Stack = "parts"
			s.BarMaxWidth = "44"
			s.ItemStyle = &opts.ItemStyle{Color: colour}
		}))
	}
	return chartView(id, "sample: the questions differ · agent: the same question, answered again · judge: the same answer, scored again.", bar), true
}
