package report

import (
	"cmp"
	"maps"
	"slices"
	"strconv"
)

// Slice is one value of a metadata field and each metric per condition
// over the samples that have it. Its JSON is the summary's "slices".
type Slice struct {
	Value      string           `json:"value"`
	Samples    int              `json:"samples"` // of the dataset with this value
	Conditions []SliceCondition `json:"conditions"`
}

// SliceCondition is one condition's metrics within a slice.
type SliceCondition struct {
	Name    string        `json:"name"`
	Metrics []SliceMetric `json:"metrics"`
}

// SliceMetric is one metric within a slice: as the summary computes it,
// over the slice's samples.
type SliceMetric struct {
	Evaluator string     `json:"evaluator"`
	Name      string     `json:"name"`
	Mean      float64    `json:"mean"`
	CI95      [2]float64 `json:"ci95"`
	N         int        `json:"n"`
	Samples   int        `json:"samples"` // scored
}

// Slices breaks the report down by the values of a field: values holds each
// sample's value by row id. Slices come in the order of their values
// (numbers by value), each with every condition and metric that has scores.
//
// Each condition's samples are read once and dealt to their slices: a
// pass per value cost 1.7 s a view for a field of 200 values over 10,000
// samples under five conditions.
func (r *Report) Slices(values map[int64]string) []Slice {
	count := map[string]int{}
	for _, v := range values {
		count[v]++
	}
	names := slices.Collect(maps.Keys(count))
	slices.SortFunc(names, compareValues)
	out := make([]Slice, len(names))
	for k, v := range names {
		out[k] = Slice{Value: v, Samples: count[v]}
	}
	at := slicePlaces(values, out)
	groups := make([][][]float64, len(names))
	for _, c := range r.Conditions {
		for k := range out {
			out[k].Conditions = append(out[k].Conditions, SliceCondition{Name: c, Metrics: []SliceMetric{}})
		}
		for i, m := range r.Metrics {
			for k := range groups {
				groups[k] = groups[k][:0]
			}
			for _, g := range r.Samples(i, c) {
				if k, ok := at[g.SampleRow]; ok {
					groups[k] = append(groups[k], g.Values())
				}
			}
			for k, group := range groups {
				if len(group) == 0 {
					continue
				}
				ms := summarizeMetric(m, group)
				sc := &out[k].Conditions[len(out[k].Conditions)-1]
				sc.Metrics = append(sc.Metrics, SliceMetric{Evaluator: m.Evaluator, Name: m.Name, Mean: ms.Mean, CI95: ms.CI95, N: ms.N, Samples: ms.Samples})
			}
		}
	}
	return out
}

// slicePlaces gives each sample row with a value the place of its slice.
func slicePlaces(values map[int64]string, slice []Slice) map[int64]int {
	place := make(map[string]int, len(slice))
	for k, s := range slice {
		place[s.Value] = k
	}
	at := make(map[int64]int, len(values))
	for row, v := range values {
		if k, ok := place[v]; ok {
			at[row] = k
		}
	}
	return at
}

// SlicePaired compares b with a within each slice, as ComparePaired does
// over the whole run.
func (r *Report) SlicePaired(values map[int64]string, slice []Slice, a, b string) [][]Paired {
	at := slicePlaces(values, slice)
	sa, sb := within(r.Side(a), at, len(slice)), within(r.Side(b), at, len(slice))
	out := make([][]Paired, len(slice))
	for k := range slice {
		out[k] = ComparePaired(r.Metrics, sa[k], sb[k])
	}
	return out
}

// within deals a side's samples to their slices: a side per slice.
func within(side Side, at map[int64]int, n int) []Side {
	out := make([]Side, n)
	for k := range out {
		out[k] = make(Side, len(side))
		for i := range side {
			out[k][i] = map[int64]float64{}
		}
	}
	for i, means := range side {
		for row, m := range means {
			if k, ok := at[row]; ok {
				out[k][i][row] = m
			}
		}
	}
	return out
}

// compareValues orders slice values: numbers by value, before text.
func compareValues(a, b string) int {
	x, errA := strconv.ParseFloat(a, 64)
	y, errB := strconv.ParseFloat(b, 64)
	switch {
	case errA == nil && errB == nil:
		return cmp.Or(cmp.Compare(x, y), cmp.Compare(a, b))
	case errA == nil:
		return -1
	case errB == nil:
		return 1
	}
	return cmp.Compare(a, b)
}
