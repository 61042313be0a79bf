package web

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
	"github.com/labstack/echo/v4"

	"assay/report"
	"assay/runner/route"
	"assay/store"
	"assay/templates"
)

// This file serves a run's Routing page: the routing algorithms replayed
// over its answers from every model.

// routingForm is the page's settings, as the URL keeps them.
type routingForm struct {
	Condition, Quality, Cost, Latency, Orders, Seed string
	ShareOf                                         string // the algorithm whose model share over time is drawn
}

func readRoutingForm(q url.Values) routingForm {
	f := routingForm{Condition: q.Get("condition"), Quality: q.Get("wq"), Cost: q.Get("wc"), Latency: q.Get("wl"),
		Orders: q.Get("orders"), Seed: q.Get("seed"), ShareOf: q.Get("share_of")}
	if !slices.Contains(route.Algorithms, f.ShareOf) {
		f.ShareOf = route.Thompson
	}
	d := route.DefaultWeights
	for _, p := range []struct {
		s *string
		v string
	}{{&f.Quality, number(d.Quality)}, {&f.Cost, number(d.Cost)}, {&f.Latency, number(d.Latency)},
		{&f.Orders, strconv.Itoa(route.DefaultOrders)}, {&f.Seed, "1"}} {
		if strings.TrimSpace(*p.s) == "" {
			*p.s = p.v
		}
	}
	return f
}

// options reads the settings, naming the field of a problem.
func (f routingForm) options() (route.Options, error) {
	var w [3]float64
	for i, p := range []struct{ name, text string }{{"Quality weight", f.Quality}, {"Cost weight", f.Cost}, {"Latency weight", f.Latency}} {
		v, err := strconv.ParseFloat(strings.TrimSpace(p.text), 64)
		if err != nil || v < 0 {
			return route.Options{}, fmt.Errorf("%s: enter a number of at least 0.", p.name)
		}
		w[i] = v
	}
	orders, err := strconv.Atoi(strings.TrimSpace(f.Orders))
	if err != nil || orders < 1 || orders > 2000 {
		return route.Options{}, fmt.Errorf("Orders: enter a whole number from 1 to 2000.")
	}
	seed, err := strconv.ParseUint(strings.TrimSpace(f.Seed), 10, 64)
	if err != nil {
		return route.Options{}, fmt.Errorf("Seed: enter a whole number of at least 0.")
	}
	opt := route.Options{Orders: orders, Seed: seed, Weights: route.Weights{Quality: w[0], Cost: w[1], Latency: w[2]}}
	if err := opt.Weights.Check(); err != nil {
		return opt, fmt.Errorf("Weights: %v.", strings.TrimPrefix(err.Error(), "weights: "))
	}
	return opt, nil
}

// routingPage handles GET /runs/:id/routing (and the same under a share link).
func (s *Server) routingPage(c echo.Context) error {
	ctx := c.Request().Context()
	sc, err := s.scope(c)
	if err != nil {
		return err
	}
	f := readRoutingForm(c.QueryParams())
	v := templates.RoutingView{Page: s.reportPage(c, sc, "Routing · "+runTitle(sc.Run)), Base: sc.Base, Static: sc.Shared,
		Form: templates.RoutingForm{Condition: f.Condition, Quality: f.Quality, Cost: f.Cost, Latency: f.Latency, Orders: f.Orders, Seed: f.Seed,
			ShareOf: f.ShareOf},
		Conditions: report.RunBases(sc.Run), Models: report.RunModels(sc.Run), Algorithms: route.Algorithms}
	status := http.StatusOK
	switch {
	case len(v.Models) < 2:
		v.Message = "This run has one model. Routing compares algorithms that pick a model per query: run several models at once (agent.models in a run file), then come back."
	case !sc.Run.Status.Finished():
		v.Message = "The run is still working: the replay uses every model's answers, so it waits for the run to end."
	default:
		opt, err := f.options()
		if err != nil {
			v.Form.Error, status = err.Error(), http.StatusUnprocessableEntity
			break
		}
		// The report, computed only here: a run of one model, or still
		// working, is told so without it (at 150,000 results, 0.1–0.3 s).
		r, err := s.loadReport(ctx, sc)
		if err != nil {
			return err
		}
		res, err := s.replay(replayKey(sc.Run.ID, r.version, f.Condition, opt), s.replayWait(), func(ctx context.Context) (*report.Routing, error) {
			// Under the server's life, not the request's: the replay is kept.
			return r.Route(ctx, s.db, f.Condition, opt, nil)
		})
		if err != nil {
			if store.ErrorCode(err) != store.EINVALID {
				return err
			}
			v.Form.Error, status = store.ErrorMessage(err), http.StatusUnprocessableEntity
			break
		}
		if res == nil {
			v.Pending = fmt.Sprintf("Replaying %d algorithms over %d orders of the answers: this page fills in when they are done.",
				len(route.Algorithms), opt.Orders)
			v.Refresh = c.Request().URL.RequestURI()
			break
		}
		routingView(&v, res, f.ShareOf)
	}
	return render(c, status, templates.Routing(v))
}

// routingView fills the page's figures and charts from a replay.
func routingView(v *templates.RoutingView, res *report.Routing, shareOf string) {
	v.Samples, v.LeftOut, v.Orders, v.Condition = res.Samples, res.LeftOut, res.Orders, res.Condition
	for _, a := range res.Algorithms {
		row := templates.RoutingRow{Name: a.Name, Quality: fmt.Sprintf("%.3f", a.Quality),
			QualityCI: fmt.Sprintf("%.3f – %.3f", a.QualityCI95[0], a.QualityCI95[1]),
			Cost:      fmt.Sprintf("$%.6f", a.CostUSD), Latency: fmt.Sprintf("%.0f ms", a.LatencyMS),
			Reward: fmt.Sprintf("%.3f", a.Reward), RewardCI: fmt.Sprintf("%.3f – %.3f", a.RewardCI95[0], a.RewardCI95[1]),
			Regret: fmt.Sprintf("%.3f", a.Regret), Shares: strings.Join(a.Shares(), " · "), Saved: "—"}
		if a.CostSaved != nil {
			row.Saved = fmt.Sprintf("%.0f%%", 100**a.CostSaved)
		}
		v.Rows = append(v.Rows, row)
	}
	for _, m := range res.Models {
		v.Alone = append(v.Alone, templates.RoutingRow{Name: m.Name, Quality: fmt.Sprintf("%.3f", m.Quality),
			Cost: fmt.Sprintf("$%.6f", m.CostUSD), Latency: fmt.Sprintf("%.0f ms", m.LatencyMS), Reward: fmt.Sprintf("%.3f", m.Reward)})
	}
	v.Charts = []templates.ChartView{frontChart(res), curveChart(res, shareOf)}
	for _, a := range res.Algorithms {
		if a.Name == shareOf {
			v.Charts = append(v.Charts, shareChart(res, a))
		}
	}
}

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

// replayJobs are the routing replays under way, by key: a replay over a
// run the size of MMLU takes a quarter of a minute, longer than a page
// should keep a reader waiting, and one reader's reloads must not start
// it again.
type replayJobs struct {
	mu   sync.Mutex
	jobs map[string]*replayJob
}

type replayJob struct {
	done chan struct{}
	res  *report.Routing
	err  error
}

// defaultReplayWait is how long the Routing page waits for a replay when
// Config.ReplayWait is 0.
const defaultReplayWait = 2 * time.Second

// replayKey names a replay of a run's report at a version ("" for the first
// of the run file's conditions).
func replayKey(run int64, version, condition string, opt route.Options) string {
	return fmt.Sprintf("%d/%s/%s/%d/%d/%v", run, version, condition, opt.Orders, opt.Seed, opt.Weights)
}

// replayWait is how long the Routing page waits for a replay.
func (s *Server) replayWait() time.Duration {
	if s.cfg.ReplayWait == 0 {
		return defaultReplayWait
	}
	return max(s.cfg.ReplayWait, 0)
}

// replay returns the replay kept under key, or starts compute (once, however
// many ask) and waits for it up to wait: nil and no error while it is still
// under way. A replay done is kept with the others; one that failed is told
// to the next request for it, and then forgotten.
func (s *Server) replay(key string, wait time.Duration, compute func(context.Context) (*report.Routing, error)) (*report.Routing, error) {
	if res, ok := s.replays.get(key); ok {
		return res, nil
	}
	q := &s.replaying
	q.mu.Lock()
	job := q.jobs[key]
	if job == nil {
		// A replay done since the look above is kept before its job goes.
		if res, ok := s.replays.get(key); ok {
			q.mu.Unlock()
			return res, nil
		}
		job = &replayJob{done: make(chan struct{})}
		if q.jobs == nil {
			q.jobs = map[string]*replayJob{}
		}
		q.jobs[key] = job
		s.background(func(ctx context.Context) {
			job.res, job.err = compute(ctx)
			if job.err == nil {
				s.replays.put(key, job.res)
				q.mu.Lock()
				delete(q.jobs, key)
				q.mu.Unlock()
			}
			close(job.done)
		})
	}
	q.mu.Unlock()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-job.done:
	case <-timer.C:
		return nil, nil
	}
	if job.err != nil {
		q.mu.Lock()
		if q.jobs[key] == job {
			delete(q.jobs, key)
		}
		q.mu.Unlock()
	}
	return job.res, job.err
}
