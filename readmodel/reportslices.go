package readmodel

import (
	"context"
	"fmt"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"assay/report"
	"assay/store"
	"assay/templates"
)

// This file builds the report's section "By slice": every metric per value
// of a metadata field (MMLU's subject), the paired comparison within each
// value, and a chart per metric.

// FieldsKey is a dataset, by id and content.
type FieldsKey struct {
	dataset int64
	sha256  string
}

// sliceFields are the metadata fields the run's samples may be sliced by,
// read once per report, and once per dataset when the server keeps them: a
// dataset never changes, and reading every sample's metadata took 70 ms of
// each report's computation (one after each verdict while a run is reviewed).
func (r *Viewed) sliceFields(ctx context.Context, db *store.DB) ([]store.SliceField, error) {
	type read struct {
		fields []store.SliceField
		err    error
	}
	got := r.Memo("slice-fields", func() any {
		key := FieldsKey{r.Run.DatasetID, r.Dataset.SHA256}
		if r.Fields != nil {
			if fields, ok := r.Fields.Get(key); ok {
				return read{fields, nil}
			}
		}
		// Not cut short by the request that asks first: the answer is kept.
		fields, err := db.SliceFields(context.WithoutCancel(ctx), r.Run.DatasetID)
		if err == nil && r.Fields != nil {
			r.Fields.Put(key, fields)
		}
		return read{fields, err}
	}).(read)
	return got.fields, got.err
}

// slicing is a report cut by a field's values: each sample's value, and
// the slices.
type slicing struct {
	values map[int64]string
	slices []report.Slice
	err    error
}

// sliced cuts the report by field, once per field.
func (r *Viewed) sliced(ctx context.Context, db *store.DB, field string) slicing {
	return r.Memo("slices\x00"+field, func() any {
		// Not cut short by the request that asks first: the answer is kept.
		values, err := db.SliceValues(context.WithoutCancel(ctx), r.Run.DatasetID, field)
		if err != nil {
			return slicing{err: err}
		}
		s := slicing{values: values}
		if r.Summary.SliceBy == field {
			s.slices = r.Summary.Slices // the summary's, computed once
		} else {
			s.slices = r.Slices(values)
		}
		return s
	}).(slicing)
}

// slicePaired compares b with a within each slice of field, once per field
// and pair: with 200 values, the comparisons take a third of a second.
func (r *Viewed) slicePaired(field, a, b string, s slicing) [][]report.Paired {
	return r.Memo("slice-pairs\x00"+field+"\x00"+a+"\x00"+b, func() any {
		return r.SlicePaired(s.values, s.slices, a, b)
	}).([][]report.Paired)
}

// sliceView is the section; nil when the dataset has no field to slice by.
// The field is the one the URL chooses, else the run file's report.slice_by.
func (r *Viewed) sliceView(ctx context.Context, db *store.DB, q Query, a, b string) (*templates.SliceView, error) {
	fields, err := r.sliceFields(ctx, db)
	if err != nil || len(fields) == 0 {
		return nil, err
	}
	v := &templates.SliceView{Field: q.Slice, A: a, B: b, View: q.View, Delta: q.Delta}
	if v.Field == "" {
		v.Field = r.Config.Report.SliceBy
	}
	known := false
	for _, f := range fields {
		v.Fields = append(v.Fields, templates.SliceFieldOption{Name: f.Name, Values: f.Values, Selected: f.Name == v.Field})
		known = known || f.Name == v.Field
	}
	if !known {
		if v.Field != "" {
			v.Message = fmt.Sprintf("The samples have no field %q with 2 to 200 values to slice by.", v.Field)
		}
		v.Field = ""
		return v, nil
	}
	got := r.sliced(ctx, db, v.Field)
	if got.err != nil {
		return nil, got.err
	}
	slices := got.slices
	v.Conditions = r.Conditions
	for _, m := range r.Metrics {
		v.Metrics = append(v.Metrics, MetricHead(m))
	}
	for _, s := range slices {
		v.Rows = append(v.Rows, r.sliceRow(s))
	}
	if a != "" && b != "" {
		for i, ps := range r.slicePaired(v.Field, a, b, got) {
			v.Paired = append(v.Paired, slicePairedRow(slices[i].Value, ps))
		}
	}
	for i, m := range r.Metrics {
		v.Charts = append(v.Charts, sliceChart(m, i, v.Field, slices, r.Conditions))
	}
	return v, nil
}

// sliceRow is one slice value's means, a cell per metric and condition.
func (r *Viewed) sliceRow(s report.Slice) templates.SliceRow {
	row := templates.SliceRow{Value: s.Value, Samples: s.Samples}
	for _, m := range r.Metrics {
		for _, c := range s.Conditions {
			cell := templates.SliceCell{}
			for _, sm := range c.Metrics {
				if sm.Evaluator == m.Evaluator && sm.Name == m.Name {
					cell = templates.SliceCell{Has: true, Mean: templates.Num(sm.Mean, m.Digits()), N: sm.Samples,
						CI: fmt.Sprintf("95%% CI %s – %s, %d scores", templates.Num(sm.CI95[0], m.Digits()), templates.Num(sm.CI95[1], m.Digits()), sm.N)}
				}
			}
			row.Cells = append(row.Cells, cell)
		}
	}
	return row
}

// slicePairedRow is one slice value's B − A, a cell per metric.
func slicePairedRow(value string, ps []report.Paired) templates.SlicePairedRow {
	pr := templates.SlicePairedRow{Value: value}
	for _, p := range ps {
		d := p.Metric.Digits()
		cell := templates.SlicePairedCell{N: p.N}
		if p.N > 0 {
			row := templates.PairedRow{Diff: p.MeanDiff, CILo: p.CILo, CIHi: p.CIHi}
			cell.Diff, cell.CI, cell.Direction = templates.Signed(p.MeanDiff, d),
				templates.Signed(p.CILo, d)+" – "+templates.Signed(p.CIHi, d), row.Direction()
		}
		pr.Cells = append(pr.Cells, cell)
	}
	return pr
}

// sliceChart draws one metric's mean per slice value, a bar per condition,
// sideways so that many values (57 subjects) stay readable.
func sliceChart(m report.Metric, i int, field string, slices []report.Slice, conditions []string) templates.ChartView {
	bar := charts.NewBar()
	lo, hi := m.Scale.Bounds()
	labels := make([]string, len(slices))
	for k, s := range slices {
		labels[k] = s.Value
	}
	bar.SetGlobalOptions(append(common(fmt.Sprintf("%s by %s", m.Label(), field), "mean over the slice's samples", "axis"),
		charts.WithTooltipOpts(opts.Tooltip{Trigger: "axis"}),
		charts.WithXAxisOpts(opts.XAxis{Type: "value", Min: lo, Max: hi}),
		charts.WithYAxisOpts(opts.YAxis{Type: "category", Inverse: opts.Bool(true),
			AxisLabel: &opts.AxisLabel{Interval: "0", Width: 160, Overflow: "truncate"}}))...)
	for _, c := range conditions {
		data := make([]opts.BarData, len(slices))
		for k, s := range slices {
			data[k] = opts.BarData{Value: nil}
			for _, sc := range s.Conditions {
				if sc.Name != c {
					continue
				}
				for _, sm := range sc.Metrics {
					if sm.Evaluator == m.Evaluator && sm.Name == m.Name {
						data[k] = opts.BarData{Value: report.Round(sm.Mean, 3)}
					}
				}
			}
		}
		bar.AddSeries(c, data, charts.WithSeriesOpts(func(s *charts.SingleSeries) { s.BarMaxWidth = "16" }))
	}
	bar.SetXAxis(labels) // on the y axis once reversed
	bar.XYReversal()
	cv := chartView(fmt.Sprintf("chart-slice-%d", i+1), "One bar per slice and condition; a slice with few samples moves a lot by chance: see n in the table.", bar)
	cv.Height = max(cv.Height, 110+len(slices)*len(conditions)*14)
	return cv
}
