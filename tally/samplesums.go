package tally

import (
	"fmt"
	"strconv"
	"strings"

	"assay/store"
)

// A sample_sums row keeps, beside its counts, its sums per metric
// (migration 0025): one line per metric, in the order the row first met
// them (metrics first met in one judgement by name, as SampleStats orders
// the run's metrics), fields apart by \x1f as in sample_scores' lines:
//
//	EVALUATOR METRIC N SUM SUM_OF_SQUARES FIRST_RESULT FIRST_JUDGEMENT
//
// A result's transaction adds its scores one by one, in the order of its
// judgements; results commit in the order of their ids. The sums are thus
// those of the row's lines added in the order of results and judgements,
// to the last bit, which is how the samples table summed them before it
// read these.

// metricSum is one metric's sums in a row, with where the row first met it.
type metricSum struct {
	MetricSums
	first firstMet
}

// rowSums are a row's sums, a metric after another.
type rowSums []metricSum

// add adds a result's scores to the sums.
func (s rowSums) add(r *store.Result) rowSums {
	for i := range r.Judgements {
		j := &r.Judgements[i]
		for _, sc := range j.Scores {
			k := 0
			for k < len(s) && (s[k].Evaluator != j.Evaluator || s[k].Metric != sc.Metric) {
				k++
			}
			if k == len(s) {
				s = append(s, metricSum{MetricSums{MetricName: MetricName{j.Evaluator, sc.Metric}}, firstMet{r.ID, j.ID}})
				for ; k > 0 && s[k-1].first == s[k].first && s[k-1].Metric > s[k].Metric; k-- {
					s[k-1], s[k] = s[k], s[k-1]
				}
			}
			m := &s[k]
			m.N++
			m.Sum += sc.Value
			m.SumSq += sc.Value * sc.Value
		}
	}
	return s
}

// text writes the sums as the column keeps them.
func (s rowSums) text() string {
	var b []byte
	for _, m := range s {
		b = appendName(b, m.Evaluator)
		b = append(b, fieldSep)
		b = appendName(b, m.Metric)
		b = append(b, fieldSep)
		b = strconv.AppendInt(b, int64(m.N), 10)
		b = append(b, fieldSep)
		b = strconv.AppendFloat(b, m.Sum, 'g', -1, 64)
		b = append(b, fieldSep)
		b = strconv.AppendFloat(b, m.SumSq, 'g', -1, 64)
		b = append(b, fieldSep)
		b = strconv.AppendInt(b, m.first.result, 10)
		b = append(b, fieldSep)
		b = strconv.AppendInt(b, m.first.judgement, 10)
		b = append(b, '\n')
	}
	return string(b)
}

// parseSums reads a row's sums into out's room, names kept once by in.
func parseSums(text string, in *names, out rowSums) (rowSums, error) {
	out = out[:0]
	for line := range strings.Lines(text) {
		line = strings.TrimSuffix(line, "\n")
		m, err := parseSum(line)
		if err != nil {
			return nil, fmt.Errorf("unreadable sums %q: %w", line, err)
		}
		if in != nil {
			m.Evaluator, m.Metric = in.intern(m.Evaluator), in.intern(m.Metric)
		}
		out = append(out, m)
	}
	return out, nil
}

// parseSum reads one line of a sample_sums row.
func parseSum(line string) (m metricSum, err error) {
	f := lineFields(line)
	if m.Evaluator, err = f.name(); err != nil {
		return m, err
	}
	if m.Metric, err = f.name(); err != nil {
		return m, err
	}
	n, err := f.int()
	if err != nil {
		return m, err
	}
	m.N = int(n)
	if m.Sum, err = f.float(); err != nil {
		return m, err
	}
	if m.SumSq, err = f.float(); err != nil {
		return m, err
	}
	if m.first.result, err = f.int(); err != nil {
		return m, err
	}
	if m.first.judgement, err = f.int(); err != nil {
		return m, err
	}
	return m, f.done()
}
