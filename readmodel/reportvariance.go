package readmodel

import (
	"fmt"
	"slices"
	"strings"

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

// sentences say, one line per part, where it is the largest — under which
// conditions and metrics — and what would narrow it: the advice once, not
// once per metric and condition (a sweep of twenty conditions said the
// same thing sixty times).
type sentences struct {
	order []string
	items map[string][]string // by dominant part: "condition · metric (share)"
	every map[string][]string // by dominant part and metric: its conditions
}

func (s *sentences) add(condition, metric string, va *report.Variance) {
	part := va.Dominant()
	if s.items == nil {
		s.items, s.every = map[string][]string{}, map[string][]string{}
	}
	if _, ok := s.items[part]; !ok {
		s.order = append(s.order, part)
	}
	item := condition + " · " + metric
	if sh, a, j := va.Shares(); part != "" {
		item += fmt.Sprintf(" (%.0f%%)", 100*map[string]float64{"sample": sh, "agent": a, "judge": j}[part])
	}
	s.items[part] = append(s.items[part], item)
	s.every[part+"\x00"+metric] = append(s.every[part+"\x00"+metric], condition)
}

// view is the lines, a metric whose largest part is the same under every
// condition said once for all of them.
func (s *sentences) view(conditions int) []templates.VarianceSentence {
	leads := map[string]string{"judge": "The judge's part is the largest in", "agent": "The agent's part is the largest in",
		"sample": "The samples' part is the largest in", "": "No spread in"}
	var out []templates.VarianceSentence
	for _, part := range s.order {
		var items []string
		said := map[string]bool{}
		for _, item := range s.items[part] {
			_, metric, _ := strings.Cut(item, " · ")
			metric, _, _ = strings.Cut(metric, " (")
			if conditions > 1 && len(s.every[part+"\x00"+metric]) == conditions {
				if !said[metric] {
					items = append(items, "every condition · "+metric)
					said[metric] = true
				}
				continue
			}
			items = append(items, item)
		}
		switch n := len(s.items[part]); {
		case len(items) <= maxListed:
		case n == s.rows():
			items = []string{"every row of the table"}
		default:
			items = []string{fmt.Sprintf("%d of the table's %d rows", n, s.rows())}
		}
		out = append(out, templates.VarianceSentence{Lead: leads[part], Items: items, Advice: report.Advice(part)})
	}
	return out
}

// maxListed is how many rows a line names before it counts them instead.
const maxListed = 6

// rows counts the rows the lines are about.
func (s *sentences) rows() int {
	n := 0
	for _, items := range s.items {
		n += len(items)
	}
	return n
}

// varianceView is the section; nil when no metric has two samples scored.
func (r *Viewed) varianceView() *templates.VarianceView {
	v := &templates.VarianceView{FirstCondition: r.Conditions[0], JudgeRepetitions: max(r.Config.JudgeRepetitions, 1)}
	var said sentences
	var clamped clampedRows
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
				Condition: c.Name, Metric: MetricHead(metric).Label(),
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
			said.add(c.Name, MetricHead(metric).Label(), va)
			if note := va.Unmeasured(); note != "" && !slices.Contains(v.Notes, note) {
				v.Notes = append(v.Notes, note)
			}
			clamped.add(c.Name+" · "+MetricHead(metric).Label(), va)
			judgesOf(v, c.Name, row.Metric, m, d)
		}
	}
	if len(v.Rows) == 0 {
		return nil
	}
	v.Sentences = said.view(len(r.Summary.Conditions))
	if note := clamped.note(); note != "" {
		v.Notes = append(v.Notes, note)
	}
	for i, c := range r.Summary.Conditions {
		if ch, ok := r.varianceChart(c, fmt.Sprintf("chart-variance-%d", i+1)); ok {
			v.Charts = append(v.Charts, ch)
		}
	}
	return v
}

// judgesOf adds what a metric under a condition says of its judges: a
// panel's judges' means and offsets, and the judge against itself.
func judgesOf(v *templates.VarianceView, condition, metric string, m report.MetricSummary, d int) {
	if len(m.Judges) > 0 {
		pr := templates.PanelRow{Condition: condition, Metric: metric, Alpha: "—"}
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
		cr := templates.ConsistencyRow{Metric: metric, Condition: condition, Answers: jc.Answers,
			Exact: templates.Pct(jc.Exact), MAD: fmt.Sprintf("%.*f", d, jc.MAD), Alpha: "—"}
		if jc.Alpha != nil {
			cr.Alpha = fmt.Sprintf("%.3f", *jc.Alpha)
		}
		v.Consistency = append(v.Consistency, cr)
	}
}

// clampedRows are the rows whose agent or sample part came out below 0.
type clampedRows struct{ agent, sample []string }

func (c *clampedRows) add(row string, va *report.Variance) {
	if va.AgentClamped {
		c.agent = append(c.agent, row)
	}
	if va.SampleClamped {
		c.sample = append(c.sample, row)
	}
}

// note says, once, which parts came out below 0 and are shown as 0; ""
// when none did.
func (c *clampedRows) note() string {
	var parts []string
	for _, p := range []struct {
		name string
		rows []string
	}{{"agent", c.agent}, {"sample", c.sample}} {
		switch n := len(p.rows); {
		case n == 0:
		case n <= maxListed:
			parts = append(parts, fmt.Sprintf("the %s part in %s", p.name, strings.Join(p.rows, "; ")))
		default:
			parts = append(parts, fmt.Sprintf("the %s part in %d rows", p.name, n))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "Came out below 0 and shown as 0: " + strings.Join(parts, ", and ") +
		". The scores vary less there than the other parts would make them; chance alone can do that when a part is small."
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
func (r *Viewed) varianceChart(c report.ConditionSummary, id string) (templates.ChartView, bool) {
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
