package store

import (
	"cmp"
	"math"
	"slices"
	"testing"
)

// A result's lines read back as written: names with separators, quotes and
// newlines, and values of every float64, to the last bit.
func TestScoreLinesReadBack(t *testing.T) {
	r := &Result{ID: 7, Repetition: 3, Judgements: []Judgement{
		{ID: 11, Evaluator: `contains "runbook.md"`, Judge: "", Scores: []Score{
			{ID: 101, Metric: `contains "runbook.md"`, Value: 1}}},
		{ID: 12, Evaluator: "rubric", Judge: "strict\x1fjudge\nB", JudgeIndex: 1, JudgeRepetition: 2, Scores: []Score{
			{ID: 102, Metric: "a metric\rwith\x00controls", Value: 0.1 + 0.2},
			{ID: 103, Metric: `"quoted"`, Value: math.Nextafter(1.0/3, 1)}}},
	}}
	lines, err := parseLines(scoreLines(r), names{})
	if err != nil {
		t.Fatal(err)
	}
	if len(lines.judgements) != 2 || len(lines.scores) != 3 {
		t.Fatalf("read %d judgements and %d scores, want 2 and 3", len(lines.judgements), len(lines.scores))
	}
	k := 0
	for i, j := range r.Judgements {
		got := lines.judgements[i]
		index, rep := fromSlot(got.slot)
		if got.id != j.ID || got.result != r.ID || got.rep != r.Repetition || index != j.JudgeIndex || rep != j.JudgeRepetition ||
			got.evaluator != j.Evaluator || got.judge != j.Judge {
			t.Errorf("judgement %d read back as %+v", j.ID, got)
		}
		for _, s := range j.Scores {
			g := lines.scores[k]
			k++
			if g.id != s.ID || g.at != i || g.metric != s.Metric || math.Float64bits(g.value) != math.Float64bits(s.Value) {
				t.Errorf("score %d read back as %+v", s.ID, g)
			}
		}
	}
	if _, err := parseLines("s\x1f1\x1f2\x1fm\n", names{}); err == nil {
		t.Error("a score line before any judgement line was read")
	}
}

// byPlace orders rows read in the table's order (condition name, then
// sample row id) as a sort by (ordinal, condition name) would, whether the
// row ids follow the ordinals or not, and whether the ordinals are dense or
// far apart.
func TestByPlaceOrdersAsTheSort(t *testing.T) {
	for _, spread := range []int{1, 100000} {
		var rows []SampleCondition
		for _, c := range []string{"a", "b", "c"} {
			for id := int64(1); id <= 50; id++ {
				if (id+int64(len(c)))%7 == 0 && c == "b" {
					continue // a sample without a row under b
				}
				ordinal := int((id*37)%50+1) * spread // row ids and ordinals in different orders
				rows = append(rows, SampleCondition{SampleCounts: SampleCounts{SampleKey: SampleKey{id, c}, Ordinal: ordinal}})
			}
		}
		want := slices.Clone(rows)
		slices.SortFunc(want, func(a, b SampleCondition) int {
			return cmp.Or(cmp.Compare(a.Ordinal, b.Ordinal), cmp.Compare(a.Condition, b.Condition))
		})
		got := byPlace(rows)
		for i := range want {
			if got[i].SampleKey != want[i].SampleKey {
				t.Fatalf("ordinals ×%d: row %d is %v, want %v", spread, i, got[i].SampleKey, want[i].SampleKey)
			}
		}
	}
}

// A row's scores are summed in the order of their results and judgements,
// whatever the order of its lines: the sums equal, to the last bit, those
// added in that order, and a metric is first met at its first result.
func TestSummerAddsInResultOrder(t *testing.T) {
	result := func(id int64, v float64) string {
		return scoreLines(&Result{ID: id, Repetition: int(id), Judgements: []Judgement{{ID: 10 * id, Evaluator: "rubric",
			Scores: []Score{{ID: 100 * id, Metric: "b", Value: v}, {ID: 100*id + 1, Metric: "a", Value: 1 - v}}}}})
	}
	x, y, z := 0.1, 0.2, 0.3 // float64 arithmetic, not exact constants
	inOrder := result(1, x) + result(2, y) + result(3, z)
	shuffled := result(2, y) + result(3, z) + result(1, x)
	want := (x + y) + z
	if want == (y+z)+x {
		t.Fatal("the values do not tell the orders apart")
	}
	for _, text := range []string{inOrder, shuffled} {
		var f summer
		sums, err := f.sum(aggregateRow{condition: "c", sample: 1, text: text})
		if err != nil {
			t.Fatal(err)
		}
		k := slices.IndexFunc(sums, func(s MetricSums) bool { return s.Metric == "b" })
		if len(sums) != 2 || k < 0 || sums[k].N != 3 || math.Float64bits(sums[k].Sum) != math.Float64bits(want) {
			t.Errorf("sums of %q: %+v, want b's sum %v", text, sums, want)
		}
		if at := f.firsts[MetricName{"rubric", "a"}]; at != (firstMet{1, 10}) {
			t.Errorf("a first met at %+v, want result 1, judgement 10", at)
		}
	}
}
