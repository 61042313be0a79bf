package readmodel

import (
	"slices"
	"sync"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"assay/config"
	"assay/report"
	"assay/stats"
	"assay/templates"
)

// charts lists every chart of a report: score distributions, variance over
// repetitions, the paired scatter of conditions a and b, and cost against
// quality. A chart with nothing to draw is left out. The charts are drawn
// side by side and listed in that order.
func (r *Viewed) charts(a, b string) []templates.ChartView {
	var draw []func() []templates.ChartView
	one := func(f func() templates.ChartView) func() []templates.ChartView {
		return func() []templates.ChartView { return []templates.ChartView{f()} }
	}
	var pass []int
	for i, m := range r.Metrics {
		if m.Scale == config.ScalePass {
			pass = append(pass, i)
			continue
		}
		draw = append(draw, one(func() templates.ChartView { return r.distributionChart(i) }))
	}
	if len(pass) > 0 {
		draw = append(draw, one(func() templates.ChartView { return r.passRateChart(pass) }))
	}
	if r.HasRepetitions() {
		draw = append(draw, one(r.spreadChart), one(r.disagreementChart))
		draw = append(draw, func() []templates.ChartView {
			if c, ok := r.passHatKChart(); ok {
				return []templates.ChartView{c}
			}
			return nil
		})
	}
	if a != "" && b != "" {
		draw = append(draw, func() []templates.ChartView { return r.pairedCharts(a, b) })
	}
	draw = append(draw, one(r.costChart))
	drawn := make([][]templates.ChartView, len(draw))
	var wg sync.WaitGroup
	for i, f := range draw {
		wg.Go(func() { drawn[i] = f() })
	}
	wg.Wait()
	return slices.Concat(drawn...)
}

// spreadChart is a box plot, per metric and condition, of each sample's
// standard deviation over its repetitions.
func (r *Viewed) spreadChart() templates.ChartView {
	box := charts.NewBoxPlot()
	box.SetGlobalOptions(append(common("Per-sample standard deviation over repetitions",
		"box: quartiles over samples · whiskers: min and max", "item"),
		charts.WithXAxisOpts(metricAxis()),
		charts.WithYAxisOpts(yAxis("std over repetitions", opts.YAxis{Min: 0})))...)
	for _, c := range r.Conditions {
		data := make([]opts.BoxPlotData, len(r.Metrics))
		for i := range r.Metrics {
			data[i] = opts.BoxPlotData{Value: report.FiveNumbers(report.RepetitionStds(r.Samples(i, c)))}
		}
		box.AddSeries(c, data)
	}
	box.SetXAxis(r.axisLabels())
	return chartView("chart-spread",
		"How much the same question's score moves between repetitions; 0 means every repetition got the same score.", box)
}

// disagreementChart shows, per metric and condition, the share of samples
// whose repetitions did not all get the same score.
func (r *Viewed) disagreementChart() templates.ChartView {
	bar := charts.NewBar()
	bar.SetGlobalOptions(append(common("Samples whose repetitions disagree", "share of samples with more than one distinct score", "axis"),
		charts.WithXAxisOpts(metricAxis()),
		charts.WithYAxisOpts(yAxis("% of samples", opts.YAxis{Min: 0, Max: 100})))...)
	for _, c := range r.Conditions {
		shares := make([]float64, len(r.Metrics))
		for i := range r.Metrics {
			shares[i] = report.Round(100*stats.Disagreement(report.Values(r.Samples(i, c))), 1)
		}
		bar.AddSeries(c, barData(shares), charts.WithSeriesOpts(narrowBars))
	}
	bar.SetXAxis(r.axisLabels())
	return chartView("chart-disagreement", "A sample disagrees when its repetitions did not all get the same score.", bar)
}
