package tally

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"

	"assay/store"
)

// A result's lines read back as written: names with separators, quotes and
// newlines, and values of every float64, to the last bit.
func TestScoreLinesReadBack(t *testing.T) {
	r := &store.Result{ID: 7, Repetition: 3, Judgements: []store.Judgement{
		{ID: 11, Evaluator: `contains "runbook.md"`, Judge: "", Scores: []store.Score{
			{ID: 101, Metric: `contains "runbook.md"`, Value: 1}}},
		{ID: 12, Evaluator: "rubric", Judge: "strict\x1fjudge\nB", JudgeIndex: 1, JudgeRepetition: 2, Scores: []store.Score{
			{ID: 102, Metric: "a metric\rwith\x00controls", Value: 0.1 + 0.2},
			{ID: 103, Metric: `"quoted"`, Value: math.Nextafter(1.0/3, 1)},
			{ID: 105, Metric: "after a gap", Value: -2}}},
	}}
	text := scoreLines(r)
	// 103 follows 102 in its judgement: its id is left out; 102 follows 101
	// of another judgement, and 105 comes after a gap: written.
	if want := "s\x1f102\x1f"; !strings.Contains(text, want) || strings.Count(text, "s\x1f\x1f") != 1 {
		t.Errorf("lines %q: want 102 written and one id left out", text)
	}
	lines, err := parseLines(text, &names{})
	if err != nil {
		t.Fatal(err)
	}
	if len(lines.judgements) != 2 || len(lines.scores) != 4 {
		t.Fatalf("read %d judgements and %d scores, want 2 and 4", len(lines.judgements), len(lines.scores))
	}
	k := 0
	for i, j := range r.Judgements {
		got := lines.judgements[i]
		index, rep := store.FromSlot(got.slot)
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
	if _, err := parseLines("s\x1f1\x1f2\x1fm\n", &names{}); err == nil {
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
		got := byPlace([][]SampleCondition{rows[:7], rows[7:]})
		for i := range want {
			if got[i].SampleKey != want[i].SampleKey {
				t.Fatalf("ordinals ×%d: row %d is %v, want %v", spread, i, got[i].SampleKey, want[i].SampleKey)
			}
		}
	}
}

// The sums a row keeps (samplesums.go) are those of its score lines added
// in the order of results and judgements, to the last bit, with where each
// metric was first met: for results committed one by one and several in a
// transaction (a sample's repetitions together, a write rolled back among
// them), repetitions out of order, a panel of two judges asked twice each,
// agent errors and judge errors between; and computing the run's
// aggregates again gives the same.
func TestSampleSumsAreTheLinesAddedInOrder(t *testing.T) {
	ctx := context.Background()
	db, run, rows := goldenRun(t, 5, 3, "a", "b")
	v := 0.1
	var results []*store.Result
	for _, rep := range []int{3, 1, 2} {
		for i, s := range rows {
			for _, c := range []string{"a", "b"} {
				r := &store.Result{RunID: run.ID, SampleRow: s.ID, Condition: c, Repetition: rep}
				if (i+rep)%4 == 0 {
					r.Error = "agent: timeout"
				} else {
					for judge := range 2 {
						for jrep := range 2 {
							v = math.Mod(v*7.3+0.137, 1) // values whose sums depend on their order
							j := store.Judgement{Evaluator: "rubric", Judge: fmt.Sprint("judge-", judge), JudgeIndex: judge, JudgeRepetition: jrep,
								Scores: []store.Score{{Metric: "completeness", Value: v}, {Metric: "accuracy", Value: 1 - v}}}
							if (i+judge+jrep)%5 == 0 {
								j.Error, j.Scores = "judge: malformed", nil
							}
							r.Judgements = append(r.Judgements, j)
						}
					}
					r.Judgements = append(r.Judgements, store.Judgement{Evaluator: "exact_match", Scores: []store.Score{{Metric: "exact_match", Value: float64(i % 2)}}})
				}
				results = append(results, r)
			}
		}
	}
	// Committed one by one, then several at once (a sample's repetitions
	// together), with a write rolled back among them now and then.
	for i, n := 0, 0; i < len(results); n++ {
		size := []int{1, 1, 4, 2, 7, 3, 12}[n%7]
		var writes []func(context.Context, store.Tx) error
		for _, r := range results[i:min(i+size, len(results))] {
			writes = append(writes, func(ctx context.Context, tx store.Tx) error {
				_, err := tx.InsertResult(ctx, r)
				return err
			})
		}
		if n%3 == 2 {
			gone := &store.Result{RunID: run.ID, SampleRow: results[i].SampleRow, Condition: results[i].Condition, Repetition: 4,
				Judgements: []store.Judgement{{Evaluator: "rubric", Scores: []store.Score{{Metric: "completeness", Value: 0.5}}}}}
			writes = slices.Insert(writes, len(writes)/2, func(ctx context.Context, tx store.Tx) error {
				if _, err := tx.InsertResult(ctx, gone); err != nil {
					return err
				}
				return errors.New("refused")
			})
		}
		for _, err := range db.CommitTogether(ctx, writes) {
			if err != nil && err.Error() != "refused" {
				t.Fatal(err)
			}
		}
		i += size
	}
	read := func() map[string]string {
		out := map[string]string{}
		err := store.EachRow(ctx, db.Read(), `SELECT s.condition, s.sample_id, s.sums, coalesce(l.scores, '') FROM sample_sums s
			LEFT JOIN sample_scores l USING (run_id, condition, sample_id) WHERE s.run_id = ?`, []any{run.ID},
			func(r *sql.Rows) error {
				var c, sums, scores string
				var id int64
				if err := r.Scan(&c, &id, &sums, &scores); err != nil {
					return err
				}
				lines, err := parseLines(scores, &names{})
				if err != nil {
					return err
				}
				var want rowSums
				for _, s := range lines.scores { // the lines are in the order results committed
					j := lines.judgements[s.at]
					k := slices.IndexFunc(want, func(m metricSum) bool { return m.Evaluator == j.evaluator && m.Metric == s.metric })
					if k < 0 {
						k = len(want)
						want = append(want, metricSum{MetricSums{MetricName: MetricName{j.evaluator, s.metric}}, firstMet{j.result, j.id}})
					}
					want[k].N++
					want[k].Sum += s.value
					want[k].SumSq += s.value * s.value
				}
				slices.SortStableFunc(want, func(a, b metricSum) int { // by where they are first met, then by name
					return cmp.Or(cmp.Compare(a.first.result, b.first.result), cmp.Compare(a.first.judgement, b.first.judgement),
						cmp.Compare(a.Metric, b.Metric))
				})
				got, err := parseSums(sums, nil, nil)
				if err != nil {
					return err
				}
				if !slices.Equal(got, want) || got.text() != want.text() {
					t.Errorf("sample %d under %s keeps\n%v\nits lines add up to\n%v", id, c, got, want)
				}
				out[fmt.Sprint(c, id)] = sums
				return nil
			})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	kept := read()
	if len(kept) != 10 {
		t.Fatalf("%d rows, want 10", len(kept))
	}
	if err := Of(db).RebuildAggregates(ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	if again := read(); !maps.Equal(again, kept) {
		t.Errorf("the sums computed again differ from those kept:\n%v\n%v", again, kept)
	}
}

// The parts a run's sample_sums rows are read in (keyParts, foldParts) hold
// every row once and in key order, however many parts, whatever the rows'
// conditions: also ones the run does not list, sorting before and after
// its own, which the ranges at either end take.
func TestKeyPartsHoldEveryRowOnce(t *testing.T) {
	ctx := context.Background()
	db, run, rows := goldenRun(t, 7, 1, "b", "m")
	var want []string
	for _, c := range []string{"a", "b", "m", "z"} { // a and z: not the run's
		for i, s := range rows {
			if c == "m" && i%3 == 0 {
				continue
			}
			if _, err := db.SaveResult(ctx, &store.Result{RunID: run.ID, SampleRow: s.ID, Condition: c, Repetition: 1}); err != nil {
				t.Fatal(err)
			}
			want = append(want, fmt.Sprint(c, "/", s.ID))
		}
	}
	for _, n := range []int{1, 2, 3, 7, 40} {
		bounds, err := Of(db).keyParts(ctx, run.ID, n)
		if err != nil {
			t.Fatal(err)
		}
		chunks, err := foldParts(ctx, db.Read(), `SELECT condition, sample_id FROM sample_sums WHERE run_id = ?`, []any{run.ID}, bounds,
			func() func(*sql.Rows) (string, error) {
				return func(r *sql.Rows) (string, error) {
					var c string
					var id int64
					err := r.Scan(&c, &id)
					return fmt.Sprint(c, "/", id), err
				}
			}, func() func([]string) ([]string, error) {
				return func(rows []string) ([]string, error) { return rows, nil }
			})
		if err != nil {
			t.Fatal(err)
		}
		if got := slices.Concat(chunks...); !slices.Equal(got, want) {
			t.Errorf("%d parts (bounds %v) read\n%v\nwant\n%v", n, bounds, got, want)
		}
		if n > 1 && len(bounds) == 0 {
			t.Errorf("%d parts: no bounds", n)
		}
	}
}
