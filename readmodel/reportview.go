package readmodel

import (
	"context"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"sync"
	"time"

	"assay/internal/text"
	"assay/report"
	"assay/store"
	"assay/templates"
)

// This file turns a report into the plain view data of its templates.

// Query is what the URL of a report chooses: the two conditions of
// its paired comparison (?a=…&b=…).
type Query struct {
	A, B, View string
	Delta      string // a difference to detect, as typed: the paired panel says how many samples it needs
	Slice      string // a metadata field the report is broken down by
	Judge      string // the panel judge whose scores alone the report shows
}

// pair resolves the compared conditions: the ones asked for when the run has
// them, else its first two. It returns a reason when there is no comparison.
func (r *Viewed) pair(q Query) (a, b, reason string) {
	a, b = q.A, q.B
	if !r.HasCondition(a) {
		a = ""
	}
	if !r.HasCondition(b) {
		b = ""
	}
	if len(r.Conditions) < 2 {
		return "", "", "This run has one condition: there is nothing to compare it with."
	}
	if a == "" {
		a = firstOther(r.Conditions, b)
	}
	if b == "" {
		b = firstOther(r.Conditions, a)
	}
	if a == b {
		return a, b, "Choose two different conditions."
	}
	return a, b, ""
}

func firstOther(names []string, not string) string {
	for _, n := range names {
		if n != not {
			return n
		}
	}
	return ""
}

// view builds the report's view. static is for the exported file: no links
// leave it.
func (r *Viewed) Page(ctx context.Context, db *store.DB, q Query, static bool, now time.Time) (templates.ReportView, error) {
	v := templates.ReportView{
		Base:    r.Scope.Base,
		Shared:  r.Scope.Shared || static,
		Static:  static,
		Polling: !r.Scope.Run.Status.Finished(),
		Version: r.Version,
		Facts:   r.facts(now, r.Scope.Shared || static),
		Summary: r.summaryView(),
	}
	if !static {
		r.linkErrors(&v.Summary)
	}
	a, b, reason := r.pair(q)
	v.Query = q.kept(a, b)
	v.Review = r.reviewView(q, r.Scope.Shared || static)
	audit, err := r.auditView(ctx, db)
	if err != nil {
		return v, err
	}
	v.Audit = audit
	v.Paired = templates.PairedView{Conditions: r.Conditions, A: a, B: b, Message: reason, View: q.View, Delta: q.Delta}
	if reason != "" {
		a, b = "", ""
	}
	chartsOf := func() []templates.ChartView {
		return r.Memo("charts\x00"+a+"\x00"+b, func() any { return r.charts(a, b) }).([]templates.ChartView)
	}
	// The parts below are kept with the report once computed; on its first
	// view, those that do not wait on each other are computed side by side.
	var ahead sync.WaitGroup
	defer ahead.Wait()
	ahead.Go(func() { chartsOf() })
	ahead.Go(func() { r.AllPairs() })
	ahead.Go(func() { _, _ = r.sliceFields(ctx, db) })
	if reason == "" {
		if err := r.pairedView(ctx, db, &v.Paired, static); err != nil {
			return v, err
		}
	}
	v.Paired.AllPairs, v.Paired.AllPairsDiffer = allPairRows(r.AllPairs())
	v.Charts = chartsOf()
	v.Variance = r.varianceView()
	if err := r.links(ctx, db, &v, q, static); err != nil {
		return v, err
	}
	if v.Slices, err = r.sliceView(ctx, db, q, a, b); err != nil {
		return v, err
	}
	if v.Slices != nil {
		v.Slices.Static = static || r.Scope.Shared
	}
	return v, nil
}

// linkErrors links each summary row with errors to its samples that have
// them.
func (r *Viewed) linkErrors(sv *templates.ReportSummary) {
	for i, row := range sv.Rows {
		if row.Errors+row.JudgeErrors > 0 {
			sv.Rows[i].ErrorsURL = r.Scope.Base + "/samples?" + url.Values{"condition": {row.Condition}, "errors": {"1"}}.Encode()
		}
	}
}

// kept is the query the report's links keep: the pair compared, when it
// has one, and the view, slice and judge.
func (q Query) kept(a, b string) string {
	if a != "" && b != "" {
		return Query{A: a, B: b, View: q.View, Delta: q.Delta, Slice: q.Slice, Judge: q.Judge}.encode()
	}
	return Query{View: q.View, Slice: q.Slice, Judge: q.Judge}.encode()
}

// links are the report's ways to other pages: routing over its models, the
// judges of its answers, each panel judge's view and back to the panel.
func (r *Viewed) links(ctx context.Context, db *store.DB, v *templates.ReportView, q Query, static bool) error {
	if len(report.RunModels(r.Run)) >= 2 && !static && r.Scope.ReviewLink == nil {
		v.RoutingURL = r.Scope.Base + "/routing"
	}
	if !static && !r.Scope.Shared {
		alike, err := db.JudgedAlike(ctx, r.Run.ID)
		if err != nil {
			return err
		}
		if len(alike) > 1 {
			v.JudgesURL = r.Scope.Base + "/judges"
		}
	}
	if v.Variance != nil && !static {
		for _, j := range v.Variance.PanelJudges {
			q2 := q
			q2.Judge = j
			v.Variance.JudgeURLs = append(v.Variance.JudgeURLs, r.Scope.Base+q2.encode()+"#summary")
		}
	}
	if q.Judge != "" {
		q2 := q
		q2.Judge = ""
		v.OneJudge = &templates.OneJudgeView{Name: q.Judge, PanelURL: r.Scope.Base + q2.encode()}
		for _, j := range r.Scope.Run.Config.Judges {
			v.OneJudge.Panel = append(v.OneJudge.Panel, j.Name)
		}
	}
	return nil
}

// pairedView fills the comparison of B with A and the samples with the largest gaps.
func (r *Viewed) pairedView(ctx context.Context, db *store.DB, p *templates.PairedView, static bool) error {
	delta, hasDelta := 0.0, false
	if p.Delta != "" {
		d, err := strconv.ParseFloat(p.Delta, 64)
		if err != nil || math.IsNaN(d) || math.IsInf(d, 0) || d == 0 {
			p.DeltaError = fmt.Sprintf("%q is not a difference: enter a number other than 0, such as 0.2.", p.Delta)
		} else {
			delta, hasDelta = math.Abs(d), true
		}
	}
	p.Rows = PairedRows(r.Compare(p.A, p.B), delta, hasDelta)
	for i := range p.Rows {
		mi := r.MetricIndex(p.Rows[i].Metric.Evaluator, p.Rows[i].Metric.Name)
		if c := r.CorrectedDiff(mi, p.A, p.B); c != nil {
			d := p.Rows[i].Metric.Digits
			p.Rows[i].Corrected = fmt.Sprintf("%s [%s, %s]", templates.Signed(c.Mean, d), templates.Signed(c.CI95[0], d), templates.Signed(c.CI95[1], d))
		}
	}
	for _, m := range r.Metrics {
		p.Metrics = append(p.Metrics, MetricHead(m))
	}
	base := r.Scope.Base
	if static {
		base = ""
	}
	var err error
	gaps := r.Memo("gaps\x00"+p.A+"\x00"+p.B, func() any {
		return report.Gaps(r.Metrics, r.Side(p.A), r.Side(p.B), MaxGaps, false)
	}).([]report.Gap)
	p.Gaps, err = GapRows(ctx, db, r.Metrics, gaps, base)
	return err
}

// facts is the report's header; a shared one names no key variable or base URL.
func (r *Viewed) facts(now time.Time, shared bool) templates.ReportFacts {
	run, sum := r.Scope.Run, r.Summary
	f := templates.ReportFacts{
		Run:     runFacts(r.Scope, r.Models),
		Status:  string(run.Status),
		Message: runMessage(run, sum),
		Done:    sum.Results,
		Total:   run.TotalTasks,
		Errors:  sum.Errors,
		CostUSD: sum.CostUSD,
	}
	f.Run.AgentBaseURL, f.Run.JudgeBaseURL = WithoutCredentials(f.Run.AgentBaseURL), WithoutCredentials(f.Run.JudgeBaseURL)
	if shared {
		f.Run.AgentBaseURL = ""
		f.Run.AgentKeyEnv = ""
		f.Run.JudgeBaseURL = ""
		if f.Run.AgentCommand != "" {
			f.Run.AgentCommand = "a command"
		}
	}
	for _, c := range sum.Conditions {
		f.JudgeErrors += c.JudgeErrors
		f.TokensIn += c.TokensIn
		f.TokensOut += c.TokensOut
	}
	if run.StartedAt != nil {
		end := now
		if run.FinishedAt != nil {
			end = *run.FinishedAt
		}
		f.Started, f.Duration = templates.When(*run.StartedAt), "took "+Duration(end.Sub(*run.StartedAt))
		if run.FinishedAt == nil {
			f.Duration = "running for " + Duration(end.Sub(*run.StartedAt))
		}
	}
	return f
}

// WithoutCredentials drops the user and password from a URL, if it has them.
func WithoutCredentials(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	u.User = nil
	return u.String()
}

// summaryView is one row per condition with a cell per metric, the pass@k
// of each, and the consistency of repeated answers.
func (r *Viewed) summaryView() templates.ReportSummary {
	var s templates.ReportSummary
	for _, m := range r.Metrics {
		s.Metrics = append(s.Metrics, MetricHead(m))
	}
	for _, c := range r.Summary.Conditions {
		s.Rows = append(s.Rows, r.summaryRow(c))
		if ks := report.PassKs(c); len(ks) > len(s.PassKs) {
			s.PassKs = ks // every condition has the same k, up to the run's repetitions
		}
	}
	r.consistencyRows(&s)
	s.Corrected = r.correctedRows()
	for ri, c := range r.Summary.Conditions {
		for _, k := range s.PassKs {
			cell := templates.PassCell{}
			if v, ok := c.PassAtK[k]; ok {
				ci := c.PassAtKCI95[k]
				cell = templates.PassCell{Value: fmt.Sprintf("%.3f", v), CI: fmt.Sprintf("%.3f – %.3f", ci[0], ci[1])}
			}
			s.Rows[ri].PassAtK = append(s.Rows[ri].PassAtK, cell)
		}
	}
	s.Stopping = r.stoppingView()
	return s
}

// summaryRow is a condition's row of the summary: its counts, costs and a
// cell per metric.
func (r *Viewed) summaryRow(c report.ConditionSummary) templates.ReportRow {
	row := templates.ReportRow{
		Condition:       c.Name,
		Results:         c.Results,
		Errors:          c.Errors,
		JudgeErrors:     c.JudgeErrors,
		ErrorKinds:      report.KindsText(c.ErrorKinds),
		JudgeErrorKinds: report.KindsText(c.JudgeErrorKinds),
		TopErrors:       errorLines(c.TopErrors),
		Retried:         c.Retried,
		ToolCalls:       c.ToolCalls,
		ToolErrors:      c.ToolErrors,
		CostUSD:         c.CostUSD,
		TokensIn:        c.TokensIn,
		TokensOut:       c.TokensOut,
		LatencyMS:       c.LatencyMS,
		Cells:           make([]templates.ReportCell, len(r.Metrics)),
	}
	for _, m := range c.Metrics {
		i := r.MetricIndex(m.Evaluator, m.Name)
		row.Cells[i] = templates.ReportCell{
			Has:          true,
			Mean:         m.Mean,
			Std:          m.Std,
			Stderr:       m.Stderr,
			CILo:         m.CI95[0],
			CIHi:         m.CI95[1],
			N:            m.N,
			Samples:      m.Samples,
			Spread:       m.RepetitionSpread,
			Disagreement: m.Disagreement,
		}
		if m.PPI != nil {
			row.Cells[i].Corrected = templates.Num(m.PPI.Mean, r.Metrics[i].Digits())
		}
	}
	if q, ok := r.Quality(c); ok {
		row.Quality = fmt.Sprintf("%.3f", q)
		if c.CostUSD > 0 {
			row.PerDollar = fmt.Sprintf("%.3g", q/c.CostUSD)
		}
	}
	return row
}

// correctedRows are the means corrected by reviews, condition by condition.
func (r *Viewed) correctedRows() []templates.CorrectedRow {
	var out []templates.CorrectedRow
	for _, c := range r.Summary.Conditions {
		for _, m := range c.Metrics {
			p := m.PPI
			if p == nil {
				continue
			}
			head := MetricHead(r.Metrics[r.MetricIndex(m.Evaluator, m.Name)])
			num := func(v float64) string { return templates.Num(v, head.Digits) }
			order := "random"
			if p.Order == report.OrderActive {
				order = "where the judge is least certain"
			}
			out = append(out, templates.CorrectedRow{Condition: c.Name, Metric: head.Label(), Judged: num(p.Mean - p.Shift),
				Mean: num(p.Mean), CI: num(p.CI95[0]) + " – " + num(p.CI95[1]), Shift: templates.Signed(p.Shift, head.Digits),
				Reviewed: p.Reviewed, Of: p.Of, Order: order, NotUsed: p.NotUsed})
		}
	}
	return out
}

// consistencyRows adds the pass^k and pass@k of each metric that repeated
// answers were scored on with a pass threshold.
func (r *Viewed) consistencyRows(s *templates.ReportSummary) {
	for _, c := range r.Summary.Conditions {
		for _, m := range c.Metrics {
			if m.PassHatK == nil {
				continue
			}
			label := MetricHead(r.Metrics[r.MetricIndex(m.Evaluator, m.Name)]).Label()
			if m.PassAt != nil {
				label += " ≥ " + Number(*m.PassAt)
			}
			row := templates.RepeatRow{Condition: c.Name, Metric: label,
				FlipRate: fmt.Sprintf("%.3f", *m.FlipRate), Kappa: "—"}
			if m.FleissKappa != nil {
				row.Kappa = fmt.Sprintf("%.3f", *m.FleissKappa)
			}
			for k := 1; k <= len(m.PassHatK); k++ {
				key := strconv.Itoa(k)
				row.Ks = append(row.Ks, templates.RepeatCell{PassHat: fmt.Sprintf("%.3f", m.PassHatK[key]), PassAt: fmt.Sprintf("%.3f", m.PassAtK[key])})
				if k > len(s.ConsistencyKs) {
					s.ConsistencyKs = append(s.ConsistencyKs, key)
				}
			}
			s.Consistency = append(s.Consistency, row)
		}
	}
}

// MetricHead describes a metric for a table head: 1–5 scores with two
// decimals, 0–1 and pass rates with three.
func MetricHead(m report.Metric) templates.ReportMetric {
	return templates.ReportMetric{Evaluator: m.Evaluator, Name: m.Name, Scale: m.Scale.String(), Digits: m.Digits()}
}

// errorLines are a condition's most common error messages, for the page.
func errorLines(top []store.ErrorCount) []templates.ErrorLine {
	var out []templates.ErrorLine
	for _, e := range top {
		out = append(out, templates.ErrorLine{Count: e.Count, Judge: e.Judge, Kind: string(e.Kind), Message: text.Clip(e.Message, 300)})
	}
	return out
}
