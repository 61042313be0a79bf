package readmodel

import (
	"fmt"
	"math"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"assay/config"
	"assay/report"
	"assay/templates"
)

// pairedCharts plot each sample's mean score under b against a: one chart
// per scale, a series per metric, and the diagonal where they are equal.
func (r *Viewed) pairedCharts(a, b string) []templates.ChartView {
	var out []templates.ChartView
	for _, sc := range []config.Scale{config.ScaleLikert, config.ScaleUnit, config.ScalePass} {
		sp := charts.NewScatter()
		lo, hi := 0.0, 1.0
		if sc == config.ScaleLikert {
			lo, hi = 1, 5
		}
		sp.SetGlobalOptions(append(common(fmt.Sprintf("Per-sample mean score: %s against %s", b, a),
			"above the diagonal "+b+" scored higher · "+sc.String()+" scale", "item"),
			charts.WithXAxisOpts(xAxis("A: "+a, opts.XAxis{Type: "value", Min: lo, Max: hi})),
			charts.WithYAxisOpts(yAxis("B: "+b, opts.YAxis{Type: "value", Min: lo, Max: hi})),
			charts.WithTooltipOpts(opts.Tooltip{Trigger: "item", Formatter: "{a}<br/>A {@[0]} · B {@[1]}<br/>samples here: {@[2]}"}))...)
		shown := map[string]bool{}
		for i, m := range r.Metrics {
			if m.Scale != sc {
				continue
			}
			pts := report.PairedPoints(r.Means(i, a), r.Means(i, b))
			opt := []charts.SeriesOpts{charts.WithItemStyleOpts(opts.ItemStyle{Color: metricColors[len(shown)%len(metricColors)], Opacity: opts.Float(0.8)})}
			if len(shown) == 0 {
				opt = append(opt, diagonal(lo, hi))
			}
			shown[m.Label()] = len(shown) == 0
			sp.AddSeries(m.Label(), scatterData(pts), opt...)
		}
		if len(shown) == 0 {
			continue
		}
		caption := "Each dot is a sample at (its mean under A, its mean under B); a bigger dot holds several samples at the same place."
		if len(shown) > 1 {
			// Metrics of one scale fall on the same places: one at a time reads better.
			sp.SetGlobalOptions(charts.WithLegendOpts(legend(shown)))
			caption += " One metric at a time: click another in the legend to show it."
		}
		out = append(out, chartView(fmt.Sprintf("chart-paired-%d", sc), caption, sp))
	}
	return out
}

// metricColors tell metrics apart on the paired scatter; the conditions'
// colours (ECharts' palette) would read as conditions.
var metricColors = []string{"#7b3fa0", "#d9730d", "#0f8a7e", "#b5367b", "#5a6b00"}

// diagonal marks the line where both conditions score the same.
func diagonal(lo, hi float64) charts.SeriesOpts {
	return func(s *charts.SingleSeries) {
		charts.WithMarkLineNameCoordItemOpts(opts.MarkLineNameCoordItem{Name: "A = B",
			Coordinate0: []any{lo, lo}, Coordinate1: []any{hi, hi}})(s)
		charts.WithMarkLineStyleOpts(opts.MarkLineStyle{Symbol: []string{"none", "none"},
			LineStyle: &opts.LineStyle{Color: "#8a93a6", Type: "dashed"}, Label: &opts.Label{Show: opts.Bool(false)}})(s)
	}
}

func scatterData(pts []report.Point) []opts.ScatterData {
	most := 1
	for _, p := range pts {
		most = max(most, p.Count)
	}
	out := make([]opts.ScatterData, len(pts))
	for i, p := range pts {
		out[i] = opts.ScatterData{Value: []any{p.X, p.Y, p.Count}, SymbolSize: dotSize(p.Count, most)}
	}
	return out
}

// dotSize grows a dot's area with the number of samples it holds, from 9
// pixels for one sample to 40 for the most crowded place of the chart.
func dotSize(n, most int) int {
	if most == 1 {
		return 9
	}
	return 9 + int(math.Round(31*math.Sqrt(float64(n-1)/float64(most-1))))
}

// costChart places each condition at (its cost, its quality).
func (r *Viewed) costChart() templates.ChartView {
	maxCost := 0.0
	for _, c := range r.Summary.Conditions {
		maxCost = max(maxCost, c.CostUSD)
	}
	if maxCost == 0 {
		return r.qualityChart()
	}
	sp := charts.NewScatter()
	sp.SetGlobalOptions(append(common("Cost against quality per condition",
		"quality: mean of the metric means rescaled to 0–1 · up and to the left is better", "item"),
		charts.WithXAxisOpts(xAxis("cost, USD (agent and judge)", opts.XAxis{Type: "value", Min: 0, Max: niceMax(1.25 * maxCost)})),
		charts.WithYAxisOpts(yAxis("quality (0–1)", opts.YAxis{Type: "value", Min: 0, Max: 1})),
		charts.WithTooltipOpts(opts.Tooltip{Trigger: "item", Formatter: "{a}<br/>cost ${@[0]}<br/>quality {@[1]}"}))...)
	for _, c := range r.Summary.Conditions {
		q, ok := r.Quality(c)
		if !ok {
			continue
		}
		sp.AddSeries(c.Name, []opts.ScatterData{{Value: []any{report.Round(c.CostUSD, 6), report.Round(q, 3)}, SymbolSize: 16}},
			charts.WithLabelOpts(opts.Label{Show: opts.Bool(true), Position: "right", Formatter: "{a}"}),
			charts.WithLabelLayoutOpts(opts.LabelLayout{MoveOverlap: "shiftY"}))
	}
	return chartView("chart-cost", "Each dot is a condition: what it cost against what it scored.", sp)
}

// qualityChart stands for the cost chart when no cost was recorded: each
// condition's quality as a bar, as every dot would sit at $0, their labels
// on one another.
func (r *Viewed) qualityChart() templates.ChartView {
	var names []string
	var values []float64
	tokens := 0
	for _, c := range r.Summary.Conditions {
		tokens += c.TokensIn + c.TokensOut
		if q, ok := r.Quality(c); ok {
			names, values = append(names, c.Name), append(values, report.Round(q, 3))
		}
	}
	bar := charts.NewBar()
	bar.SetGlobalOptions(append(common("Quality per condition",
		"quality: mean of the metric means rescaled to 0–1 · no cost was recorded", "item"),
		charts.WithXAxisOpts(xAxis("quality (0–1)", opts.XAxis{Type: "value", Min: 0, Max: 1})),
		charts.WithYAxisOpts(opts.YAxis{Type: "category", Data: names, Inverse: opts.Bool(true), AxisLabel: &opts.AxisLabel{Interval: "0"}}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(false)}),
		charts.WithTooltipOpts(opts.Tooltip{Trigger: "item", Formatter: "{b}: quality {c}"}))...)
	bar.AddSeries("quality", barData(values), charts.WithSeriesOpts(func(s *charts.SingleSeries) {
		s.BarMaxWidth = "44"
		s.ItemStyle = &opts.ItemStyle{Color: "#5b7db1"}
	}))
	caption := "No cost was recorded (the models have no price: add them in Settings), so the chart of cost against quality would put every condition at $0; here is each condition's quality."
	if tokens == 0 {
		caption = "No cost was recorded: no call reported the tokens it used. Here is each condition's quality."
	}
	return chartView("chart-cost", caption, bar)
}
