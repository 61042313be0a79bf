package web

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"github.com/labstack/echo/v4"

	"assay/readmodel"
	"assay/report"
	"assay/store"
	"assay/templates"
)

// queueOrders are the orders a reviewer may take the samples in.
var queueOrders = []templates.QueueOrder{
	{Key: "random", Label: "Random order", About: "a seeded shuffle: its agreement figures are unbiased, and its first samples, reviewed whole, correct the judge's mean"},
	{Key: "active", Label: "Where the judge is least certain", About: "drawn with known chances, favouring samples its panel and repetitions split on: they correct the judge's mean with fewer reviews"},
	{Key: "claims", Label: "Unverified claims first", About: "samples where the judge flagged claims it could not check"},
	{Key: "disagreement", Label: "Largest disagreement first", About: "samples whose repetitions were scored most differently"},
	{Key: "lowest", Label: "Lowest scores first", About: "samples the judge scored lowest"},
}

func queueOrder(key string) (templates.QueueOrder, bool) {
	i := slices.IndexFunc(queueOrders, func(o templates.QueueOrder) bool { return o.Key == key })
	if i < 0 {
		return templates.QueueOrder{}, false
	}
	return queueOrders[i], true
}

// sampleQueue is the run's samples in a review order, with the number of
// scores each has.
func (s *Server) sampleQueue(c echo.Context, sc *readmodel.Scope, order string) ([]int64, map[int64]int, error) {
	// The samples table the server keeps (the order of its metrics, the
	// one thing its evaluators decide, changes nothing here): a reviewer
	// stepping through a 150,000-result run no longer folds every sample's
	// scores at each step.
	t, err := s.model.Samples(c.Request().Context(), sc)
	if err != nil {
		return nil, nil, err
	}
	by, ids, scores := queueFacts(t)
	if order == report.OrderRandom || order == report.OrderActive || order == "" {
		r, err := s.model.Report(c.Request().Context(), sc)
		if err != nil {
			return nil, nil, err
		}
		r.ReviewDesign().Order(cmp.Or(order, report.OrderRandom), ids)
		return ids, scores, nil
	}
	slices.SortStableFunc(ids, func(x, y int64) int { return by[x].compare(by[y], order) })
	return ids, scores, nil
}

// queueSample is what a review order looks at in a sample: its claims,
// the widest spread of its scores, its lowest mean and its place.
type queueSample struct {
	claims  int
	spread  float64
	lowest  float64
	ordinal int
}

// compare orders two samples by the order named, then by their places.
func (a *queueSample) compare(b *queueSample, order string) int {
	switch order {
	case "claims":
		if a.claims != b.claims {
			return b.claims - a.claims
		}
	case "disagreement":
		if a.spread != b.spread {
			return cmpFloat(b.spread, a.spread)
		}
	case "lowest":
		if a.lowest != b.lowest {
			return cmpFloat(a.lowest, b.lowest)
		}
	}
	return a.ordinal - b.ordinal
}

// queueFacts folds the samples table by sample: each sample's facts, the
// samples in their table's order, and the number of scores each has.
func queueFacts(t *report.SampleTable) (map[int64]*queueSample, []int64, map[int64]int) {
	by := map[int64]*queueSample{}
	scores := map[int64]int{}
	var ids []int64
	for _, r := range t.Rows {
		a := by[r.SampleRow]
		if a == nil {
			a = &queueSample{lowest: 2, ordinal: r.Ordinal}
			by[r.SampleRow] = a
			ids = append(ids, r.SampleRow)
		}
		a.claims += r.Claims
		for i, m := range r.Metrics {
			if m.N == 0 {
				continue
			}
			scale := t.Metrics[i].Scale
			lo, hi := scale.Bounds()
			a.spread = max(a.spread, m.Std/(hi-lo))
			a.lowest = min(a.lowest, scale.Unit(m.Mean))
			scores[r.SampleRow] += m.N
		}
	}
	return by, ids, scores
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// reviewNext handles GET {base}/review/next?order=…&after=…: the next sample
// in that order, after the one given, that the reader has not reviewed
// every score of.
func (s *Server) reviewNext(c echo.Context) error {
	sc, err := s.scope(c)
	if err != nil {
		return err
	}
	if !canReview(c, sc) {
		return echo.NewHTTPError(http.StatusForbidden, "You may read this run, not review it.")
	}
	o, ok := queueOrder(c.QueryParam("order"))
	if !ok {
		o = queueOrders[0]
	}
	ids, scores, err := s.sampleQueue(c, sc, o.Key)
	if err != nil {
		return err
	}
	verdicts, err := s.model.Reviews(c.Request().Context(), sc.Run.ID)
	if err != nil {
		return err
	}
	who := s.reviewerOf(c)
	mine := map[int64]int{}
	for _, v := range verdicts.List {
		if v.Reviewer == who.Name {
			mine[v.SampleRow]++
		}
	}
	after, _ := strconv.ParseInt(c.QueryParam("after"), 10, 64)
	start := 0
	if i := slices.Index(ids, after); i >= 0 {
		start = i + 1
	}
	for k := range ids {
		id := ids[(start+k)%len(ids)]
		if scores[id] > 0 && (who.Name == "" || mine[id] < scores[id]) {
			return c.Redirect(http.StatusSeeOther, sampleURL(sc.Base, id, "queue="+o.Key))
		}
	}
	setFlash(c, "ok", "Every scored sample has your verdicts. Thank you!")
	return c.Redirect(http.StatusSeeOther, sc.Base+"/samples")
}

// startQueue is the form that starts the review queue, for a page outside it.
func startQueue(sc *readmodel.Scope) *templates.QueueBar {
	return &templates.QueueBar{Order: queueOrders[0], Orders: queueOrders, StartURL: sc.Base + "/review/next"}
}

// queueBar is the review queue's bar on a sample page: the order in use
// and the link to the next sample in it.
func (s *Server) queueBar(c echo.Context, sc *readmodel.Scope, smp *store.Sample) *templates.QueueBar {
	o, ok := queueOrder(c.QueryParam("queue"))
	if !ok {
		o = queueOrders[0]
	}
	return &templates.QueueBar{Order: o, Orders: queueOrders, Active: ok,
		NextURL: fmt.Sprintf("%s/review/next?order=%s&after=%d", sc.Base, o.Key, smp.ID), StartURL: sc.Base + "/review/next"}
}
