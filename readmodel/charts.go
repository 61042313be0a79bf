package readmodel

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"assay/config"
	"assay/report"
	"assay/templates"
)

// Charts are built with go-echarts, but only their option leaves the server:
// it goes into a data attribute as JSON, and static/report.js draws it with
// the embedded echarts.min.js. go-echarts' own page templates, which load
// ECharts from a remote asset host, are never rendered, so a report loads
// nothing from elsewhere.

// chartHeight is the height of a chart, in pixels.
const chartHeight = 340

// option is a go-echarts chart, ready to give its ECharts option.
type option interface {
	Validate()
	JSON() map[string]any
}

// chartView finishes a chart and wraps its option for a page. json.Marshal
// escapes <, > and &, so the option is safe in an attribute or a script.
func chartView(id, caption string, c option) templates.ChartView {
	c.Validate()
	b, err := json.Marshal(c.JSON())
	if err != nil {
		b = []byte("{}") // unreachable: the option is made of plain values
	}
	return templates.ChartView{ID: id, Option: string(b), Height: chartHeight, Caption: caption}
}

// common are the options every chart shares: a title that says what is
// plotted, a legend under it, a tooltip, and room for the axis labels.
func common(title, subtitle, trigger string) []charts.GlobalOpts {
	tooltip := opts.Tooltip{Trigger: trigger}
	if trigger == "axis" {
		tooltip.ValueFormatter = "{v}%" // every axis chart plots shares
	}
	return []charts.GlobalOpts{
		charts.WithInitializationOpts(opts.Initialization{AssetsHost: "/static/"}),
		charts.WithTitleOpts(opts.Title{
			Title:         title,
			Subtitle:      subtitle,
			Left:          "center",
			TitleStyle:    &opts.TextStyle{FontSize: 14, Color: "#1d2330"},
			SubtitleStyle: &opts.TextStyle{FontSize: 12, Color: "#5d6678"},
		}),
		charts.WithLegendOpts(legend(nil)),
		charts.WithTooltipOpts(tooltip),
		charts.WithGridOpts(opts.Grid{
			Top:          "86",
			Left:         "52",
			Right:        "28",
			Bottom:       "34",
			ContainLabel: opts.Bool(true),
		}),
	}
}

// legend lists the series under the title, on as many lines as they take
// (report.js makes room for them); selected hides those set false.
func legend(selected map[string]bool) opts.Legend {
	return opts.Legend{Type: "plain", Top: "48", Left: "center", Selected: selected, TextStyle: &opts.TextStyle{FontSize: 12}}
}

// axis names an axis in the middle of its side.
func xAxis(name string, extra opts.XAxis) opts.XAxis {
	extra.Name = name
	extra.NameLocation = "middle"
	extra.NameGap = 28
	return extra
}

func yAxis(name string, extra opts.YAxis) opts.YAxis {
	extra.Name = name
	extra.NameLocation = "middle"
	extra.NameGap = 42
	return extra
}

// distributionChart shows one metric's scores, conditions side by side.
func (r *Viewed) distributionChart(i int) templates.ChartView {
	m := r.Metrics[i]
	bar := charts.NewBar()
	title := fmt.Sprintf("%s: share of scores at each value", m.Label())
	caption := "Bars: the share of a condition's scores (every repetition) at each value; conditions side by side."
	if m.Scale == config.ScaleUnit {
		title = fmt.Sprintf("%s: histogram of scores", m.Label())
		caption = "Each bar: the share of a condition's scores (every repetition) in a tenth of the 0–1 range."
	}
	axis := "score"
	if m.Scale == config.ScaleUnit {
		axis = "score, by tenths (0.3: from 0.3 to under 0.4)"
	}
	bar.SetGlobalOptions(append(common(title, m.Scale.String()+" scale", "axis"),
		charts.WithXAxisOpts(xAxis(axis, opts.XAxis{AxisLabel: &opts.AxisLabel{Interval: "0"}})),
		charts.WithYAxisOpts(yAxis("% of scores", opts.YAxis{Min: 0})))...)
	var bins []string
	for _, c := range r.Conditions {
		b, shares := report.Distribution(m.Scale, r.Samples(i, c))
		bins = b
		bar.AddSeries(c, barData(shares), charts.WithSeriesOpts(narrowBars))
	}
	bar.SetXAxis(bins)
	return chartView(fmt.Sprintf("chart-distribution-%d", i), caption, bar)
}

// passRateChart shows every pass/fail metric's pass rate, conditions side by side.
func (r *Viewed) passRateChart(metrics []int) templates.ChartView {
	bar := charts.NewBar()
	bar.SetGlobalOptions(append(common("Pass rate per condition", "share of results that passed", "axis"),
		charts.WithXAxisOpts(metricAxis()),
		charts.WithYAxisOpts(yAxis("% passed", opts.YAxis{Min: 0, Max: 100})))...)
	names := r.axisLabels()
	var labels []string
	for _, i := range metrics {
		labels = append(labels, names[i])
	}
	for _, c := range r.Conditions {
		rates := make([]float64, len(metrics))
		for j, i := range metrics {
			_, shares := report.Distribution(config.ScalePass, r.Samples(i, c))
			rates[j] = shares[1]
		}
		bar.AddSeries(c, barData(rates), charts.WithSeriesOpts(narrowBars))
	}
	bar.SetXAxis(labels)
	return chartView("chart-pass-rate", "Each bar: the share of a condition's scored results (every repetition) that passed.", bar)
}

// narrowBars keeps a bar readable when a chart has few of them.
func narrowBars(s *charts.SingleSeries) { s.BarMaxWidth = "44" }

func barData(values []float64) []opts.BarData {
	out := make([]opts.BarData, len(values))
	for i, v := range values {
		out[i] = opts.BarData{Value: v}
	}
	return out
}

// axisLabels names the metrics along an axis: by metric name alone unless
// two evaluators give metrics of the same name.
func (r *Viewed) axisLabels() []string {
	seen := map[string]int{}
	for _, m := range r.Metrics {
		seen[m.Name]++
	}
	out := make([]string, len(r.Metrics))
	for i, m := range r.Metrics {
		out[i] = m.Name
		if seen[m.Name] > 1 {
			out[i] = m.Label()
		}
	}
	return out
}

// metricAxis shows every metric's name under its group, wrapped when long.
func metricAxis() opts.XAxis {
	return opts.XAxis{AxisLabel: &opts.AxisLabel{Interval: "0", Width: 150, Overflow: "break"}}
}

// niceMax rounds a chart's upper bound up to a readable value.
func niceMax(v float64) float64 {
	if v <= 0 {
		return 1
	}
	step := math.Pow(10, math.Floor(math.Log10(v)))
	return math.Ceil(v/step*2) * step / 2
}
