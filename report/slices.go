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
func (r *Report) Slices(values map[int64]string) []Slice {
	count := map[string]int{}
	for _, v := range values {
		count[v]++
	}
	names := slices.Collect(maps.Keys(count))
	slices.SortFunc(names, compareValues)
	out := make([]Slice, 0, len(names))
	for _, v := range names {
		s := Slice{Value: v, Samples: count[v]}
		for _, c := range r.Conditions {
			sc := SliceCondition{Name: c, Metrics: []SliceMetric{}}
			for i, m := range r.Metrics {
				var groups [][]float64
				for _, g := range r.Samples(i, c) {
					if val, ok := values[g.SampleRow]; ok && val == v {
						groups = append(groups, g.Values())
					}
				}
				if len(groups) == 0 {
					continue
				}
				ms := summarizeMetric(m, groups)
				sc.Metrics = append(sc.Metrics, SliceMetric{Evaluator: m.Evaluator, Name: m.Name, Mean: ms.Mean, CI95: ms.CI95, N: ms.N, Samples: ms.Samples})
			}
			s.Conditions = append(s.Conditions, sc)
		}
		out = append(out, s)
	}
	return out
}

// SlicePaired compares b with a within each slice, as ComparePaired does
// over the whole run.
func (r *Report) SlicePaired(values map[int64]string, slice []Slice, a, b string) [][]Paired {
	sa, sb := r.Side(a), r.Side(b)
	out := make([][]Paired, len(slice))
	for i, s := range slice {
		out[i] = ComparePaired(r.Metrics, within(sa, values, s.Value), within(sb, values, s.Value))
	}
	return out
}

// within keeps the samples of a side whose value is v.
func within(side Side, values map[int64]string, v string) Side {
	out := make(Side, len(side))
	for i, means := range side {
		out[i] = map[int64]float64{}
		for row, m := range means {
			if val, ok := values[row]; ok && val == v {
				out[i][row] = m
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
