package readmodel

import (
	"strconv"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"assay/config"
	"assay/report"
	"assay/templates"
)

// palette is ECharts' default series colours.
var palette = []string{"#5470c6", "#91cc75", "#fac858", "#ee6666", "#73c0de", "#3ba272", "#fc8452", "#9a60b4", "#ea7ccc"}

// consistencyMetric is the metric a condition's consistency figures are
// of: its first pass/fail one answered more than once, code_execution's
// first; nil for none.
func consistencyMetric(c report.ConditionSummary) *report.MetricSummary {
	var first *report.MetricSummary
	for i := range c.Metrics {
		m := &c.Metrics[i]
		if m.PassHatK == nil {
			continue
		}
		if first == nil || m.Evaluator == string(config.EvalCodeExecution) && first.Evaluator != m.Evaluator {
			first = m
		}
	}
	return first
}

// passHatKChart draws, per condition, pass^k (every one of k answers
// passes) falling with k, and pass@k (at least one does) rising: the
// further apart, the less one answer can be relied on. False when no
// condition has them.
func (r *Viewed) passHatKChart() (templates.ChartView, bool) {
	line := charts.NewLine()
	line.SetGlobalOptions(append(common("pass^k and pass@k by k", "solid: every one of k answers passes · dashed: at least one does", "axis"),
		charts.WithXAxisOpts(xAxis("k, answers to the same sample", opts.XAxis{})),
		charts.WithYAxisOpts(yAxis("% of samples", opts.YAxis{Min: 0, Max: 100})))...)
	most := 0
	for i, c := range r.Summary.Conditions {
		m := consistencyMetric(c)
		if m == nil {
			continue
		}
		most = max(most, len(m.PassHatK))
		hat, at := make([]opts.LineData, len(m.PassHatK)), make([]opts.LineData, len(m.PassHatK))
		for k := 1; k <= len(m.PassHatK); k++ {
			key := strconv.Itoa(k)
			hat[k-1] = opts.LineData{Value: report.Round(100*m.PassHatK[key], 1)}
			at[k-1] = opts.LineData{Value: report.Round(100*m.PassAtK[key], 1)}
		}
		// A condition's two lines in one colour: ECharts' own, in turn.
		colour := palette[i%len(palette)]
		line.AddSeries(c.Name+" pass^k", hat, charts.WithLineStyleOpts(opts.LineStyle{Color: colour, Width: 2}),
			charts.WithItemStyleOpts(opts.ItemStyle{Color: colour}))
		line.AddSeries(c.Name+" pass@k", at, charts.WithLineStyleOpts(opts.LineStyle{Color: colour, Type: "dashed"}),
			charts.WithItemStyleOpts(opts.ItemStyle{Color: colour}))
	}
	if most == 0 {
		return templates.ChartView{}, false
	}
	ks := make([]string, most)
	for i := range ks {
		ks[i] = strconv.Itoa(i + 1)
	}
	line.SetXAxis(ks)
	return chartView("chart-pass-hat-k", "From each condition's first pass/fail metric answered more than once per sample (see the consistency table).", line), true
}
