package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"assay"
	"assay/readmodel"
	"assay/report"
	"assay/route"
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
	}{{&f.Quality, readmodel.Number(d.Quality)}, {&f.Cost, readmodel.Number(d.Cost)}, {&f.Latency, readmodel.Number(d.Latency)},
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
		r, err := s.model.Report(ctx, sc)
		if err != nil {
			return err
		}
		res, err := s.replay(ctx, replayKey(sc.Run.ID, r.Version, f.Condition, opt), s.replayWait(), func(ctx context.Context) (*report.Routing, error) {
			// Under the server's life, not the request's: the replay is kept.
			return r.Route(ctx, s.db, f.Condition, opt, nil)
		})
		if errors.Is(err, errReplaysBusy) {
			v.Pending = "The server is replaying other settings for others now: this page starts yours when one of those is done."
			v.Refresh = c.Request().URL.RequestURI()
			c.Response().Header().Set("Retry-After", "5")
			status = http.StatusTooManyRequests
			break
		}
		if err != nil {
			if assay.ErrorCode(err) != assay.EINVALID {
				return err
			}
			v.Form.Error, status = assay.ErrorMessage(err), http.StatusUnprocessableEntity
			break
		}
		if res == nil {
			v.Pending = fmt.Sprintf("Replaying %d algorithms over %d orders of the answers: this page fills in when they are done.",
				len(route.Algorithms), opt.Orders)
			v.Refresh = c.Request().URL.RequestURI()
			break
		}
		readmodel.RoutingView(&v, res, f.ShareOf)
	}
	return render(c, status, templates.Routing(v))
}
