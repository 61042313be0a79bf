package readmodel

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"assay/report"
	"assay/store"
	"assay/templates"
)

// maxDisagreements is how many answers the judges page lists where the
// judges of the same answers differ most.
const maxDisagreements = 12

// JudgesView sets side by side the judges of the same answers: each run
// (the run that made the answers, then those that judged them again) with
// its judge, its means, how it agrees with people, its audit and what a
// judgement cost, and the answers where the judges differ most.
func JudgesView(ctx context.Context, db *store.DB, reports []*Viewed) (templates.JudgesView, error) {
	var v templates.JudgesView
	labels := judgedMetrics(reports)
	for _, l := range labels {
		v.Metrics = append(v.Metrics, l.label)
	}
	for _, r := range reports {
		row, err := judgeRow(ctx, db, r, labels)
		if err != nil {
			return v, err
		}
		v.Rows = append(v.Rows, row)
		v.Reviewed = v.Reviewed || slices.ContainsFunc(row.Cells, func(c templates.JudgeCell) bool { return c.Reviewed > 0 })
	}
	v.Differ = disagreements(reports, labels)
	if len(v.Differ) > 0 {
		ids, err := db.SampleIDs(ctx, reports[0].Scope.Dataset.ID)
		if err != nil {
			return v, err
		}
		for i := range v.Differ {
			v.Differ[i].SampleID = ids[v.Differ[i].Sample]
		}
	}
	return v, nil
}

// metricLabel is a metric the judges page compares: its label and scale.
type metricLabel struct {
	label string
	head  templates.ReportMetric
	lo    float64
	hi    float64
}

// judgedMetrics are the metrics of every report, in the first's order.
func judgedMetrics(reports []*Viewed) []metricLabel {
	var out []metricLabel
	for _, r := range reports {
		for _, m := range r.Metrics {
			head := MetricHead(m)
			if !slices.ContainsFunc(out, func(l metricLabel) bool { return l.label == head.Label() }) {
				lo, hi := m.Scale.Bounds()
				out = append(out, metricLabel{head.Label(), head, lo, hi})
			}
		}
	}
	return out
}

// judgeRow is one run's judge and its figures.
func judgeRow(ctx context.Context, db *store.DB, r *Viewed, labels []metricLabel) (templates.JudgeRunRow, error) {
	run, cfg := r.Scope.Run, r.Scope.Run.Config
	row := templates.JudgeRunRow{RunID: run.ID, Name: run.Name, Judge: cfg.Judge.Model, Source: run.RejudgedFrom == 0}
	if len(cfg.Judges) > 1 {
		var names []string
		for _, j := range cfg.Judges {
			names = append(names, j.Model)
		}
		row.Judge = "panel: " + strings.Join(names, ", ")
	}
	for _, e := range cfg.Evaluators {
		row.Evaluators = append(row.Evaluators, e.Label())
	}
	for _, l := range labels {
		row.Cells = append(row.Cells, judgeCell(r, l))
	}
	usd, n, err := db.JudgeCost(ctx, run.ID)
	if err != nil {
		return row, err
	}
	row.PerJudgement = "—"
	if n > 0 && usd > 0 {
		row.PerJudgement = fmt.Sprintf("$%.5f", usd/float64(n))
	}
	audit, err := r.auditView(ctx, db)
	if err != nil {
		return row, err
	}
	if audit != nil {
		row.Audit = audit.Lines
	}
	return row, nil
}

// judgeCell is a run's figures on one metric: its mean over conditions
// (each condition's mean, averaged), corrected where reviews allow, and
// how it agrees with people.
func judgeCell(r *Viewed, l metricLabel) templates.JudgeCell {
	var cell templates.JudgeCell
	var means, corrected []float64
	for _, c := range r.Summary.Conditions {
		for _, m := range c.Metrics {
			if MetricHead(r.Metrics[r.MetricIndex(m.Evaluator, m.Name)]).Label() != l.label {
				continue
			}
			means = append(means, m.Mean)
			if m.PPI != nil {
				corrected = append(corrected, m.PPI.Mean)
			}
		}
	}
	if len(means) == 0 {
		return cell
	}
	cell.Mean = templates.Num(report.Mean(means), l.head.Digits)
	if len(corrected) == len(means) {
		cell.Corrected = templates.Num(report.Mean(corrected), l.head.Digits)
	}
	for _, a := range r.Reviews.Agreement {
		if MetricHead(a.Metric).Label() != l.label {
			continue
		}
		cell.Reviewed = a.Reviewed
		cell.MAE = fmt.Sprintf("%.2f [%.2f, %.2f]", a.MAD, a.MADCI95[0], a.MADCI95[1])
		cell.Kappa = "—"
		if a.Kappa != nil {
			cell.Kappa = fmt.Sprintf("%.2f", *a.Kappa)
		}
		if a.Alpha != nil {
			cell.Alpha = fmt.Sprintf("%.2f", *a.Alpha)
		}
	}
	return cell
}

// disagreements are the answers whose judges' scores differ most, on a
// 0–1 scale, each with every run's score.
func disagreements(reports []*Viewed, labels []metricLabel) []templates.DisagreeRow {
	if len(reports) < 2 {
		return nil
	}
	type key struct {
		label, condition string
		sample           int64
		rep              int32
	}
	scores := map[key][]float64{}
	for ri, r := range reports {
		for a, v := range r.AnswerMeans() {
			k := key{MetricHead(r.Metrics[a.Metric]).Label(), a.Condition, a.Sample, a.Rep}
			if scores[k] == nil {
				scores[k] = slices.Repeat([]float64{math.NaN()}, len(reports))
			}
			scores[k][ri] = v
		}
	}
	scale := map[string]metricLabel{}
	for _, l := range labels {
		scale[l.label] = l
	}
	type differ struct {
		k      key
		spread float64
	}
	var all []differ
	for k, s := range scores {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, v := range s {
			if !math.IsNaN(v) {
				lo, hi = min(lo, v), max(hi, v)
			}
		}
		l := scale[k.label]
		if hi > lo {
			all = append(all, differ{k, (hi - lo) / (l.hi - l.lo)})
		}
	}
	slices.SortFunc(all, func(a, b differ) int {
		return cmp.Or(cmp.Compare(b.spread, a.spread), cmp.Compare(a.k.sample, b.k.sample), cmp.Compare(a.k.label, b.k.label),
			cmp.Compare(a.k.condition, b.k.condition), cmp.Compare(a.k.rep, b.k.rep))
	})
	var out []templates.DisagreeRow
	for _, d := range all[:min(len(all), maxDisagreements)] {
		row := templates.DisagreeRow{Metric: d.k.label, Condition: d.k.condition, Repetition: int(d.k.rep),
			URL: fmt.Sprintf("/runs/%d/samples/%d", reports[0].Scope.Run.ID, d.k.sample), Sample: d.k.sample}
		for _, v := range scores[d.k] {
			row.Scores = append(row.Scores, scoreText(v, scale[d.k.label].head.Digits))
		}
		out = append(out, row)
	}
	return out
}

func scoreText(v float64, digits int) string {
	if math.IsNaN(v) {
		return "—"
	}
	return templates.Num(v, digits)
}
