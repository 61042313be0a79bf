package readmodel

import (
	"cmp"
	"context"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"assay/report"
	"assay/store"
	"assay/tally"

	"golang.org/x/sync/errgroup"
)

// SampleFilter is the samples table's filter, sort and page. It lives in the
// URL query, so a link reproduces the view.
type SampleFilter struct {
	Condition string // only this condition
	Metric    string // metricKey the thresholds look at; "" = any metric
	Below     string // mean of the metric under this value
	Spread    string // standard deviation over repetitions above this value
	Claims    bool   // has unverified claims
	Errors    bool   // has an agent or judge error
	Search    string // text in the question, golden answer or a response
	Review    string // reviewed, unreviewed or overridden: by the verdicts on its scores
	Reviewer  string // has a verdict by this reviewer
	Sort      string // sample, condition, spread, errors, claims, or a metricKey
	Desc      bool
	Page      int
	Grid      bool // one row per sample, a column per condition
}

// MetricKey names a metric in URLs: "rubric.completeness".
func MetricKey(m report.Metric) string { return m.Evaluator + "." + m.Name }

// ParseSampleFilter reads a filter from a URL query. Numbers that do not
// parse are kept as typed, so the form shows them, and ignored.
func ParseSampleFilter(q url.Values) SampleFilter {
	page, _ := strconv.Atoi(q.Get("page"))
	return SampleFilter{
		Condition: q.Get("condition"),
		Metric:    q.Get("metric"),
		Below:     strings.TrimSpace(q.Get("below")),
		Spread:    strings.TrimSpace(q.Get("spread")),
		Claims:    q.Get("claims") != "",
		Errors:    q.Get("errors") != "",
		Search:    strings.TrimSpace(q.Get("q")),
		Review:    reviewFilter(q.Get("review")),
		Reviewer:  strings.TrimSpace(q.Get("reviewer")),
		Sort:      q.Get("sort"),
		Desc:      q.Get("dir") == "desc",
		Page:      max(page, 1),
		Grid:      q.Get("view") == "grid",
	}
}

// Query writes the filter back as a URL Query, leaving out what is unset.
// Without the page, it is the view's identity: sort links and the pager add theirs.
func (f SampleFilter) Query(withPage bool) url.Values {
	q := url.Values{}
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	set("condition", f.Condition)
	set("metric", f.Metric)
	set("below", f.Below)
	set("spread", f.Spread)
	set("q", f.Search)
	set("review", f.Review)
	set("reviewer", f.Reviewer)
	if f.Claims {
		q.Set("claims", "1")
	}
	if f.Errors {
		q.Set("errors", "1")
	}
	set("sort", f.Sort)
	if f.Desc {
		q.Set("dir", "desc")
	}
	if f.Grid {
		q.Set("view", "grid")
	}
	if withPage && f.Page > 1 {
		q.Set("page", strconv.Itoa(f.Page))
	}
	return q
}

// Filtering reports whether the filter leaves any row out.
func (f SampleFilter) Filtering() bool {
	return f.Condition != "" || threshold(f.Below) != nil || threshold(f.Spread) != nil || f.Claims || f.Errors || f.Search != "" ||
		f.Reviewing()
}

// Reviewing reports whether the filter looks at verdicts.
func (f SampleFilter) Reviewing() bool { return f.Review != "" || f.Reviewer != "" }

// reviewFilter is a review filter's value when it is one, else "".
func reviewFilter(s string) string {
	switch s {
	case "reviewed", "unreviewed", "overridden":
		return s
	}
	return ""
}

// KeepReviewed reports whether a row passes the filter's review part.
func (f SampleFilter) KeepReviewed(k tally.SampleKey, x *ReviewIndex) bool {
	if x == nil {
		return true
	}
	switch {
	case f.Review == "reviewed" && !x.Reviewed(k),
		f.Review == "unreviewed" && x.Reviewed(k),
		f.Review == "overridden" && !x.Overridden(k),
		f.Reviewer != "" && !x.By(k, f.Reviewer):
		return false
	}
	return true
}

// threshold parses a number typed in the filter form; nil when empty or not a number.
func threshold(s string) *float64 {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil
	}
	return &v
}

// MetricAt is where the thresholds' metric stands in metrics: -1 for any
// metric, len(metrics) for one the table does not have.
func (f SampleFilter) MetricAt(metrics []report.Metric) int {
	if f.Metric == "" {
		return -1
	}
	return metricIndex(metrics, f.Metric)
}

// metricIndex is where the metric of that metricKey stands in metrics,
// len(metrics) when it is not there.
func metricIndex(metrics []report.Metric, key string) int {
	for i, m := range metrics {
		if MetricKey(m) == key {
			return i
		}
	}
	return len(metrics)
}

// Keeper returns whether a row passes the filter, its thresholds read
// once for every row. metricAt is f.metricAt of the table's metrics;
// matches is the text search's result, nil when there is no search.
func (f SampleFilter) Keeper(metricAt int, matches *tally.SampleMatches) func(r *report.SampleRow) bool {
	below, spread := threshold(f.Below), threshold(f.Spread)
	return func(r *report.SampleRow) bool { return f.keep(r, metricAt, matches, below, spread) }
}

// keep says whether the filter keeps the row: its facts, then its
// scores.
func (f SampleFilter) keep(r *report.SampleRow, metricAt int, matches *tally.SampleMatches, below, spread *float64) bool {
	switch {
	case f.Condition != "" && r.Condition != f.Condition,
		f.Claims && r.Claims == 0,
		f.Errors && r.Errors+r.JudgeErrors == 0,
		matches != nil && !matches.Samples[r.SampleRow] && !matches.Response(&r.SampleCounts):
		return false
	}
	return below == nil && spread == nil || scoresKept(r, metricAt, below, spread)
}

// scoresKept says whether a metric of the row (the one at metricAt, or
// any) has a mean below and a spread above the thresholds given.
func scoresKept(r *report.SampleRow, metricAt int, below, spread *float64) bool {
	for i, m := range r.Metrics {
		if metricAt >= 0 && i != metricAt || m.N == 0 {
			continue
		}
		if (below == nil || m.Mean < *below) && (spread == nil || m.Std > *spread) {
			return true
		}
	}
	return false
}

// SortRows orders rows by the filter's column; rows without a value for a
// metric come last either way; ties keep dataset and condition order.
// Each row's keys are read once, and the last of them, its place in rows,
// makes the order total: a sort that need not be stable gives it, in a
// fraction of a stable sort's time on tens of thousands of rows.
func (f SampleFilter) SortRows(rows []*report.SampleRow, metrics []report.Metric, condOrder map[string]int) {
	type keyed struct {
		value             float64
		has               bool
		ordinal, cond, at int
		row               *report.SampleRow
	}
	value := f.sortValue(metrics, condOrder)
	keys := make([]keyed, len(rows))
	for i, r := range rows {
		v, ok := value(r)
		keys[i] = keyed{value: v, has: ok, ordinal: r.Ordinal, cond: condOrder[r.Condition], at: i, row: r}
	}
	slices.SortFunc(keys, func(a, b keyed) int {
		if a.has != b.has {
			if a.has {
				return -1
			}
			return 1
		}
		c := cmp.Compare(a.value, b.value)
		if f.Desc {
			c = -c
		}
		return cmp.Or(c, cmp.Compare(a.ordinal, b.ordinal), cmp.Compare(a.cond, b.cond), cmp.Compare(a.at, b.at))
	})
	for i := range keys {
		rows[i] = keys[i].row
	}
}

// sortValue returns what a row is sorted by, and whether it has it.
func (f SampleFilter) sortValue(metrics []report.Metric, condOrder map[string]int) func(*report.SampleRow) (float64, bool) {
	switch f.Sort {
	case "", "sample":
		return func(r *report.SampleRow) (float64, bool) { return float64(r.Ordinal), true }
	case "condition":
		return func(r *report.SampleRow) (float64, bool) { return float64(condOrder[r.Condition]), true }
	case "errors":
		return func(r *report.SampleRow) (float64, bool) { return float64(r.Errors + r.JudgeErrors), true }
	case "claims":
		return func(r *report.SampleRow) (float64, bool) { return float64(r.Claims), true }
	case "spread":
		return func(r *report.SampleRow) (float64, bool) { return SpreadOf(r) }
	}
	at := metricIndex(metrics, f.Sort)
	return func(r *report.SampleRow) (float64, bool) {
		if at < len(r.Metrics) && r.Metrics[at].N > 0 {
			return r.Metrics[at].Mean, true
		}
		return 0, false
	}
}

// SpreadOf is a row's largest standard deviation over repetitions, of any metric.
func SpreadOf(r *report.SampleRow) (float64, bool) {
	var s float64
	scored := false
	for _, m := range r.Metrics {
		if m.N > 0 {
			s, scored = max(s, m.Std), true
		}
	}
	return s, scored
}

// SampleTable returns the run's rows per sample and condition, and those
// that pass the filter in its order. The text search, a scan of every
// response, runs beside the statistics' scans.
func (m *Model) SampleTable(ctx context.Context, sc *Scope, f SampleFilter) (*report.SampleTable, []*report.SampleRow, error) {
	var stats *report.SampleTable
	var matches *tally.SampleMatches
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		stats, err = m.Samples(gctx, sc)
		return err
	})
	if f.Search != "" {
		g.Go(func() (err error) {
			matches, err = m.Search(gctx, sc, f.Search)
			return err
		})
	}
	var reviews *ReviewIndex
	if f.Reviewing() && !(sc.Shared && sc.ReviewLink == nil) {
		g.Go(func() error {
			vs, err := m.Reviews(gctx, sc.Run.ID)
			if err != nil {
				return err
			}
			reviews = vs.Index()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, nil, err
	}
	rows := make([]*report.SampleRow, 0, len(stats.Rows))
	keep := f.Keeper(f.MetricAt(stats.Metrics), matches)
	for i := range stats.Rows {
		if keep(&stats.Rows[i]) && f.KeepReviewed(stats.Rows[i].SampleKey, reviews) {
			rows = append(rows, &stats.Rows[i])
		}
	}
	f.SortRows(rows, stats.Metrics, ConditionOrder(sc.Run))
	return stats, rows, nil
}

// ConditionOrder maps each condition of a run to its position at launch.
func ConditionOrder(run *store.Run) map[string]int {
	order := make(map[string]int, len(run.Conditions))
	for i, c := range run.Conditions {
		order[c.Name] = i
	}
	return order
}
