package readmodel

import (
	"assay/report"
	"assay/route"
	"assay/templates"
	"fmt"
	"slices"
	"strconv"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
)

// shareChart stacks, along the queries in the order they came, the share
// of them one algorithm sent to each model: how it settles.
func shareChart(res *report.Routing, a route.AlgorithmResult) templates.ChartView {
	line := charts.NewLine()
	what := "the share of each query's place in the order sent to each model, over every order"
	if a.ShareBin > 1 {
		what = fmt.Sprintf("the share of each stretch of %d queries sent to each model, over every order", a.ShareBin)
	}
	line.SetGlobalOptions(append(common("Model share over time: "+a.Name, what, "axis"),
		charts.WithXAxisOpts(xAxis("queries", opts.XAxis{})),
		charts.WithYAxisOpts(yAxis("% of queries", opts.YAxis{Min: 0, Max: 100})))...)
	var xs []string
	for b := range a.ShareOverTime {
		xs = append(xs, strconv.Itoa(min((b+1)*a.ShareBin, res.Samples)))
	}
	line.SetXAxis(xs)
	for m, model := range res.Models {
		data := make([]opts.LineData, len(a.ShareOverTime))
		for b, shares := range a.ShareOverTime {
			data[b] = opts.LineData{Value: report.Round(100*shares[m], 1)}
		}
		line.AddSeries(model.Name, data, charts.WithLineChartOpts(opts.LineChart{Stack: "share", ShowSymbol: opts.Bool(false)}),
			charts.WithAreaStyleOpts(opts.AreaStyle{Opacity: opts.Float(0.6)}))
	}
	return chartView("chart-routing-share", "Each band is a model's share of the queries at that point; a router that has learnt settles on the models that pay.", line)
}

// frontChart plots quality against cost per query for every algorithm and
// every model alone, with the Pareto front (nothing both cheaper and
// better) drawn through.
func frontChart(res *report.Routing) templates.ChartView {
	sc := charts.NewScatter()
	sc.SetGlobalOptions(append(common("Quality against cost per query", "every algorithm and every model alone · the line: the Pareto front", "item"),
		charts.WithXAxisOpts(xAxis("cost per query (USD)", opts.XAxis{Type: "value", Scale: opts.Bool(true)})),
		charts.WithYAxisOpts(yAxis("quality (0–1)", opts.YAxis{Type: "value", Scale: opts.Bool(true)})),
		charts.WithTooltipOpts(opts.Tooltip{Trigger: "item", Formatter: "{a}<br/>cost {@[0]} · quality {@[1]}"}))...)
	type pt struct {
		name    string
		cost, q float64
	}
	var pts []pt
	for _, a := range res.Algorithms {
		pts = append(pts, pt{a.Name, a.CostUSD, a.Quality})
		sc.AddSeries(a.Name, []opts.ScatterData{{Value: []any{report.Round(a.CostUSD, 8), report.Round(a.Quality, 4)}, SymbolSize: 12}})
	}
	for _, m := range res.Models {
		pts = append(pts, pt{"model " + m.Name, m.CostUSD, m.Quality})
		sc.AddSeries("model "+m.Name, []opts.ScatterData{{Value: []any{report.Round(m.CostUSD, 8), report.Round(m.Quality, 4)}, SymbolSize: 14, Symbol: "diamond"}})
	}
	slices.SortFunc(pts, func(a, b pt) int {
		if a.cost != b.cost {
			if a.cost < b.cost {
				return -1
			}
			return 1
		}
		if a.q > b.q {
			return -1
		}
		return 1
	})
	var front []opts.LineData
	bestQ := -1.0
	for _, p := range pts {
		if p.q > bestQ {
			front = append(front, opts.LineData{Value: []any{report.Round(p.cost, 8), report.Round(p.q, 4)}})
			bestQ = p.q
		}
	}
	line := charts.NewLine()
	line.AddSeries("Pareto front", front, charts.WithLineStyleOpts(opts.LineStyle{Type: "dashed", Color: "#8a93a6"}))
	sc.Overlap(line)
	return chartView("chart-routing-front", "Up and to the left is better: more quality for less. A point on the dashed line has nothing both cheaper and better.", sc)
}

// curveChart plots each learning algorithm's cumulative average reward
// against the query's place, with a band of one standard deviation over
// the orders.
func curveChart(res *report.Routing, banded string) templates.ChartView {
	line := charts.NewLine()
	line.SetGlobalOptions(append(common("Learning curves", "cumulative average reward after each query, mean over orders", "axis"),
		charts.WithXAxisOpts(xAxis("queries", opts.XAxis{})),
		charts.WithYAxisOpts(yAxis("average reward", opts.YAxis{Scale: opts.Bool(true)})),
		charts.WithTooltipOpts(opts.Tooltip{Trigger: "axis"}))...)
	n := res.Samples
	step := max(1, n/150) // at most about 150 points a line
	var xs []string
	for t := step - 1; t < n; t += step {
		xs = append(xs, strconv.Itoa(t+1))
	}
	line.SetXAxis(xs)
	for _, a := range res.Algorithms {
		var data []opts.LineData
		for t := step - 1; t < n; t += step {
			data = append(data, opts.LineData{Value: report.Round(a.Curve[t], 4)})
		}
		line.AddSeries(a.Name, data, charts.WithLineChartOpts(opts.LineChart{ShowSymbol: opts.Bool(false)}))
		if a.Name != banded {
			continue
		}
		// The band: its lower edge, then its width stacked on it and filled.
		var lo, width []opts.LineData
		for t := step - 1; t < n; t += step {
			lo = append(lo, opts.LineData{Value: report.Round(a.CurveLo[t], 4)})
			width = append(width, opts.LineData{Value: report.Round(a.CurveHi[t]-a.CurveLo[t], 4)})
		}
		band := a.Name + " ± sd"
		line.AddSeries(band, lo, charts.WithLineChartOpts(opts.LineChart{Stack: "band", ShowSymbol: opts.Bool(false)}),
			charts.WithLineStyleOpts(opts.LineStyle{Opacity: opts.Float(0)}))
		line.AddSeries(band, width, charts.WithLineChartOpts(opts.LineChart{Stack: "band", ShowSymbol: opts.Bool(false)}),
			charts.WithLineStyleOpts(opts.LineStyle{Opacity: opts.Float(0)}), charts.WithAreaStyleOpts(opts.AreaStyle{Opacity: opts.Float(0.2)}))
	}
	return chartView("chart-routing-curves", "How fast each algorithm learns: a flat line learns nothing; the baselines are flat by design. The shaded band: one standard deviation across orders of the algorithm the form follows.", line)
}
