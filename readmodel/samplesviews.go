package readmodel

import (
	"fmt"

	"assay/report"
	"assay/templates"
)

// This file turns the samples table's data into its plain view.

// SamplesView is the table's frame: the filter form, the sortable columns and the counts.
func SamplesView(sc *Scope, f SampleFilter, stats *report.SampleTable, matching int) templates.SamplesView {
	v := templates.SamplesView{
		Report:   ReportNav(sc),
		Matching: matching,
		All:      len(stats.Rows),
		ClearURL: sc.Base + "/samples",
		Filter: templates.SampleFilterForm{
			Condition: f.Condition,
			Metric:    f.Metric,
			Below:     f.Below,
			Spread:    f.Spread,
			Claims:    f.Claims,
			Errors:    f.Errors,
			Search:    f.Search,
			Sort:      f.Sort,
			Review:    f.Review,
			Reviewer:  f.Reviewer,
			Reviews:   !sc.Shared || sc.ReviewLink != nil,
		},
	}
	if f.Desc {
		v.Filter.Dir = "desc"
	}
	for _, c := range sc.Run.Conditions {
		v.Conditions = append(v.Conditions, c.Name)
	}
	path := sc.Base + "/samples"
	v.Sample = sortColumn(path, f, "sample", "Sample", "dataset order", false)
	v.Condition = sortColumn(path, f, "condition", "Condition", "the run's condition order", false)
	name := MetricNamer(stats.Metrics)
	for _, m := range stats.Metrics {
		key := MetricKey(m)
		v.Metrics = append(v.Metrics, templates.MetricOption{Key: key, Label: name(m)})
		v.Columns = append(v.Columns, sortColumn(path, f, key, name(m), name(m)+": mean ± standard deviation over repetitions", true))
	}
	v.Columns = append(v.Columns,
		sortColumn(path, f, "spread", "Spread", "the largest standard deviation over repetitions, of any metric", true),
		sortColumn(path, f, "errors", "Errors", "agent errors, and judge errors below them", true),
		sortColumn(path, f, "claims", "Claims", "unverified claims the judges listed", true))
	return v
}

// sortColumn is a header that sorts by key: ascending first, the other way
// when it is already the sort. The page goes back to the first.
func sortColumn(path string, f SampleFilter, key, label, title string, num bool) templates.SortColumn {
	active := f.Sort == key || (key == "sample" && f.Sort == "")
	next := f
	next.Sort, next.Page = key, 1
	if active {
		next.Desc = !f.Desc
	} else {
		// First the lowest scores, but the largest spread and the most errors and claims.
		next.Desc = key == "spread" || key == "errors" || key == "claims"
	}
	return templates.SortColumn{
		Label:  label,
		Title:  "Sort by " + title,
		URL:    path + "?" + next.Query(false).Encode(),
		Active: active,
		Desc:   active && f.Desc,
		Num:    num,
	}
}

// SampleTableRow is one row of the table, without its texts and link.
func SampleTableRow(r *report.SampleRow, metrics []report.Metric, name func(report.Metric) string) templates.SampleTableRow {
	row := templates.SampleTableRow{
		Name:        r.SampleID,
		Ordinal:     r.Ordinal,
		Condition:   r.Condition,
		Results:     r.Results,
		Errors:      r.Errors,
		JudgeErrors: r.JudgeErrors,
		Claims:      r.Claims,
		Spread:      "—",
	}
	if s, ok := SpreadOf(r); ok {
		row.Spread = fmt.Sprintf("%.2f", s)
	}
	for i, m := range metrics {
		row.Metrics = append(row.Metrics, metricCell(r.Metrics[i], name(m)))
	}
	return row
}

// metricCell shows one metric's statistics in a row.
func metricCell(st report.SampleMetric, label string) templates.MetricCell {
	if st.N == 0 {
		return templates.MetricCell{Title: label + ": no score"}
	}
	return templates.MetricCell{Mean: fmt.Sprintf("%.2f", st.Mean), Std: fmt.Sprintf("%.2f", st.Std),
		Title: fmt.Sprintf("%s: %d scores", label, st.N)}
}

// ReportNav is the head of a report's sub-pages.
func ReportNav(sc *Scope) templates.ReportNav {
	return templates.ReportNav{
		RunID:   sc.Run.ID,
		RunName: sc.Run.Name,
		Dataset: sc.Dataset.Name,
		Kind:    string(sc.Dataset.Kind),
		Base:    sc.Base,
	}
}
