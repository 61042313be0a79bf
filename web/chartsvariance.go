package web

import (
	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"assay/runner/stats"
	"assay/templates"
)

// charts lists every chart of a report: score distributions, variance over
// repetitions, the paired scatter of conditions a and b, and cost against
// quality. A chart with nothing to draw is left out.
func (r *report) charts(a, b string) []templates.ChartView {
	var out []templates.ChartView
	var pass []int
	for i, m := range r.metrics {
		if m.Scale == scalePass {
			pass = append(pass, i)
			continue
		}
		out = append(out, r.distributionChart(i))
	}
	if len(pass) > 0 {
		out = append(out, r.passRateChart(pass))
	}
	if r.hasRepetitions() {
		out = append(out, r.spreadChart(), r.disagreementChart())
	}
	if a != "" && b != "" {
		out = append(out, r.pairedCharts(a, b)...)
	}
	return append(out, r.costChart())
}

// hasRepetitions reports whether some sample has two scores of a metric, so
// that a spread over repetitions exists.
func (r *report) hasRepetitions() bool {
	for i := range r.metrics {
		for _, groups := range r.samples[i] {
			if len(repetitionStds(groups)) > 0 {
				return true
			}
		}
	}
	return false
}

// spreadChart is a box plot, per metric and condition, of each sample's
// standard deviation over its repetitions.
func (r *report) spreadChart() templates.ChartView {
	box := charts.NewBoxPlot()
	box.SetGlobalOptions(append(common("Per-sample standard deviation over repetitions",
		"box: quartiles over samples · whiskers: min and max", "item"),
		charts.WithXAxisOpts(metricAxis()),
		charts.WithYAxisOpts(yAxis("std over repetitions", opts.YAxis{Min: 0})))...)
	for _, c := range r.conditions {
		data := make([]opts.BoxPlotData, len(r.metrics))
		for i := range r.metrics {
			data[i] = opts.BoxPlotData{Value: fiveNumbers(repetitionStds(r.samples[i][c]))}
		}
		box.AddSeries(c, data)
	}
	box.SetXAxis(r.axisLabels())
	return chartView("chart-spread",
		"How much the same question's score moves between repetitions; 0 means every repetition got the same score.", box)
}

// disagreementChart shows, per metric and condition, the share of samples
// whose repetitions did not all get the same score.
func (r *report) disagreementChart() templates.ChartView {
	bar := charts.NewBar()
	bar.SetGlobalOptions(append(common("Samples whose repetitions disagree", "share of samples with more than one distinct score", "axis"),
		charts.WithXAxisOpts(metricAxis()),
		charts.WithYAxisOpts(yAxis("% of samples", opts.YAxis{Min: 0, Max: 100})))...)
	for _, c := range r.conditions {
		shares := make([]float64, len(r.metrics))
		for i := range r.metrics {
			shares[i] = round(100*stats.Disagreement(values(r.samples[i][c])), 1)
		}
		bar.AddSeries(c, barData(shares), charts.WithSeriesOpts(narrowBars))
	}
	bar.SetXAxis(r.axisLabels())
	return chartView("chart-disagreement", "A sample disagrees when its repetitions did not all get the same score.", bar)
}

// values returns the score groups of samples, as the stats package takes them.
func values(groups []sampleScores) [][]float64 {
	out := make([][]float64, len(groups))
	for i, g := range groups {
		out[i] = g.Values
	}
	return out
}
