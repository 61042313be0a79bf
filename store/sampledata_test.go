package store_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"assay"
	"assay/store"
	"assay/tally"
)

// sampleRun stores three samples with their own texts and a run over them
// under two conditions, two repetitions, with the results test makes.
func sampleRun(t *testing.T, db *store.DB, result func(s store.Sample, cond string, rep int) *store.Result) (*store.Run, []store.Sample) {
	t.Helper()
	ctx := context.Background()
	texts := [][2]string{{"Is 100% sure?", "yes_no"}, {"Ünïcode question", "Ä"}, {"plain", "plain answer"}}
	var samples []store.Sample
	for i, tx := range texts {
		samples = append(samples, store.Sample{Ordinal: i + 1, SampleID: fmt.Sprintf("s%d", i+1), Input: tx[0], Reference: tx[1],
			Choices: []string{}, Metadata: map[string]any{}})
	}
	d := &store.Dataset{Name: "d", Kind: assay.KindQA, SHA256: "sum", Format: "jsonl"}
	if _, err := db.CreateDataset(ctx, d, samples); err != nil {
		t.Fatal(err)
	}
	samples, _ = db.Samples(ctx, d.ID, 0, 0)
	run := &store.Run{DatasetID: d.ID, Repetitions: 2,
		Conditions: []assay.Condition{{Name: "b"}, {Name: "a"}}}
	if err := db.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	for _, s := range samples {
		for _, c := range run.Conditions {
			for rep := 1; rep <= 2; rep++ {
				if r := result(s, c.Name, rep); r != nil {
					r.RunID, r.SampleRow, r.Condition, r.Repetition = run.ID, s.ID, c.Name, rep
					if _, err := db.SaveResult(ctx, r); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
	}
	return run, samples
}

func TestSampleStatsFoldsRepetitions(t *testing.T) {
	db := openTestDB(t)
	run, samples := sampleRun(t, db, func(s store.Sample, cond string, rep int) *store.Result {
		switch {
		case s.SampleID == "s3":
			return nil // not run yet
		case s.SampleID == "s2" && cond == "a" && rep == 2:
			return &store.Result{Response: "", Error: "agent failed"}
		}
		j := store.Judgement{Evaluator: "rubric", Scores: []store.Score{{Metric: "factual_adherence", Value: float64(rep * 2)},
			{Metric: "completeness", Value: 3}}}
		if cond == "b" && rep == 1 {
			j.UnverifiedClaims = []string{"one", "two"}
		}
		exact := store.Judgement{Evaluator: "exact_match", Error: "no letter", Scores: []store.Score{}}
		return &store.Result{Response: "r", Judgements: []store.Judgement{j, exact}}
	})
	st, err := tally.Of(db).SampleStats(context.Background(), run.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := []tally.MetricName{{Evaluator: "rubric", Metric: "completeness"}, {Evaluator: "rubric", Metric: "factual_adherence"}}
	got := slices.SortedFunc(slices.Values(st.Metrics), func(a, b tally.MetricName) int { return strings.Compare(a.Metric, b.Metric) })
	if !slices.Equal(got, want) {
		t.Errorf("metrics %v, want %v", st.Metrics, want)
	}
	var keys []string
	for _, r := range st.Rows {
		keys = append(keys, r.SampleID+"/"+r.Condition)
	}
	if !slices.Equal(keys, []string{"s1/a", "s1/b", "s2/a", "s2/b"}) {
		t.Fatalf("rows %v", keys)
	}
	s1b := st.Rows[1]
	if s1b.SampleRow != samples[0].ID || s1b.Results != 2 || s1b.Claims != 2 || s1b.JudgeErrors != 2 || s1b.Errors != 0 {
		t.Errorf("s1/b: %+v", s1b)
	}
	i := slices.IndexFunc(s1b.Metrics, func(m tally.MetricSums) bool { return m.Metric == "factual_adherence" })
	if fa := s1b.Metrics[max(i, 0)]; i < 0 || fa.N != 2 || fa.Sum != 6 || fa.SumSq != 20 {
		t.Errorf("factual adherence over 2 and 4: %+v, want n 2, sum 6, sum of squares 20", fa)
	}
	s2a := st.Rows[2]
	if s2a.Results != 2 || s2a.Errors != 1 || len(s2a.Metrics) != 2 || s2a.Metrics[0].N != 1 {
		t.Errorf("s2/a with an agent error: %+v", s2a)
	}
}

// Each row lists its metrics in the run's order (where each was first
// met), also a row that met them in another order.
func TestSampleStatsListsEveryRowsMetricsInTheRunsOrder(t *testing.T) {
	db := openTestDB(t)
	run, _ := sampleRun(t, db, func(s store.Sample, cond string, rep int) *store.Result {
		both := []store.Score{{Metric: "x", Value: 1}, {Metric: "y", Value: 2}}
		switch {
		case s.SampleID == "s2" && rep == 1, s.SampleID == "s3":
			both = both[1:] // y alone: s2 meets y before x
		}
		return &store.Result{Response: "r", Judgements: []store.Judgement{{Evaluator: "rubric", Scores: both}}}
	})
	st, err := tally.Of(db).SampleStats(context.Background(), run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := []tally.MetricName{{Evaluator: "rubric", Metric: "x"}, {Evaluator: "rubric", Metric: "y"}}; !slices.Equal(st.Metrics, want) {
		t.Fatalf("metrics %v, want %v", st.Metrics, want)
	}
	for _, r := range st.Rows {
		var got []string
		for _, m := range r.Metrics {
			got = append(got, m.Metric)
		}
		want := []string{"x", "y"}
		if r.SampleID == "s3" {
			want = want[1:]
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s under %s lists %v, want %v", r.SampleID, r.Condition, got, want)
		}
	}
}

func TestSearchSamplesIsLiteral(t *testing.T) {
	db := openTestDB(t)
	run, samples := sampleRun(t, db, func(s store.Sample, cond string, rep int) *store.Result {
		if s.SampleID == "s3" && cond == "a" {
			return &store.Result{Response: "It is 50_50, SURELY."}
		}
		return &store.Result{Response: "no"}
	})
	for _, tc := range []struct {
		text      string
		samples   []int64
		responses []tally.SampleKey
	}{
		{"0%", []int64{samples[0].ID}, nil},
		{"s_o", nil, nil}, // _ is a character, not a wildcard: "yes_no" does not match
		{"_", []int64{samples[0].ID}, []tally.SampleKey{{SampleRow: samples[2].ID, Condition: "a"}}},
		{"surely", nil, []tally.SampleKey{{SampleRow: samples[2].ID, Condition: "a"}}},
		{"PLAIN", []int64{samples[2].ID}, nil},
	} {
		m, err := tally.Of(db).SearchSamples(context.Background(), run.ID, run.DatasetID, tc.text)
		if err != nil {
			t.Fatal(err)
		}
		var got []int64
		for id := range m.Samples {
			got = append(got, id)
		}
		slices.Sort(got)
		found := m.Responses(countedPairs(t, db, run.ID))
		if !slices.Equal(got, tc.samples) || len(found) != len(tc.responses) {
			t.Errorf("%q: samples %v, responses %v; want %v, %v", tc.text, got, found, tc.samples, tc.responses)
		}
		for _, k := range tc.responses {
			if !found[k] {
				t.Errorf("%q: no match of %v", tc.text, k)
			}
		}
	}
}

func TestSampleHeadsAndNeighbours(t *testing.T) {
	db := openTestDB(t)
	run, samples := sampleRun(t, db, func(store.Sample, string, int) *store.Result { return nil })
	heads, err := db.SampleHeads(context.Background(), []int64{samples[1].ID, samples[2].ID}, 3)
	if err != nil {
		t.Fatal(err)
	}
	if h := heads[samples[1].ID]; h.Input != "Ünïc" || h.Reference != "Ä" || len(heads) != 2 {
		t.Errorf("heads %v: want n+1 characters, not bytes", heads)
	}
	for i, want := range [][2]int64{{0, samples[1].ID}, {samples[0].ID, samples[2].ID}, {samples[1].ID, 0}} {
		prev, next, err := db.SampleNeighbours(context.Background(), run.DatasetID, samples[i].Ordinal)
		if err != nil || prev != want[0] || next != want[1] {
			t.Errorf("neighbours of %s: %d, %d (%v), want %v", samples[i].SampleID, prev, next, err, want)
		}
	}
}

// TestSampleStatsAndReportScoresOverManyChunks folds a run of 2,600
// sample and condition rows, read in chunks of a few hundred whose room
// later chunks reuse: every row keeps its own sample, counts and sums, and
// the report's scores each sample's values.
func TestSampleStatsAndReportScoresOverManyChunks(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t)
	const n = 1300
	var samples []store.Sample
	for i := 1; i <= n; i++ {
		samples = append(samples, store.Sample{Ordinal: i, SampleID: fmt.Sprintf("q%04d", i), Input: "?", Reference: "!",
			Choices: []string{}, Metadata: map[string]any{}})
	}
	d := &store.Dataset{Name: "many", Kind: assay.KindQA, SHA256: "many", Format: "jsonl"}
	if _, err := db.CreateDataset(ctx, d, samples); err != nil {
		t.Fatal(err)
	}
	samples, _ = db.Samples(ctx, d.ID, 0, 0)
	run := &store.Run{DatasetID: d.ID, Repetitions: 1, Conditions: []assay.Condition{{Name: "a"}, {Name: "b"}}}
	if err := db.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	value := func(ordinal int, cond string) float64 {
		if cond == "a" {
			return float64(1 + ordinal%5)
		}
		return float64(1 + (ordinal*3)%7)
	}
	ordinals := map[int64]int{}
	for _, s := range samples {
		ordinals[s.ID] = s.Ordinal
		for _, c := range []string{"a", "b"} {
			j := store.Judgement{Evaluator: "rubric", Scores: []store.Score{{Metric: "m", Value: value(s.Ordinal, c)}}}
			for range s.Ordinal % 3 {
				j.UnverifiedClaims = append(j.UnverifiedClaims, "a claim")
			}
			r := &store.Result{RunID: run.ID, SampleRow: s.ID, Condition: c, Repetition: 1, Response: "r", Judgements: []store.Judgement{j}}
			if _, err := db.SaveResult(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
	}
	st, err := tally.Of(db).SampleStats(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Rows) != 2*n {
		t.Fatalf("%d rows, want %d", len(st.Rows), 2*n)
	}
	for k, r := range st.Rows {
		ordinal, cond := k/2+1, []string{"a", "b"}[k%2]
		if r.Ordinal != ordinal || ordinals[r.SampleRow] != ordinal || r.Condition != cond || r.SampleID != fmt.Sprintf("q%04d", ordinal) {
			t.Fatalf("row %d is sample %d (%s, row %d) under %s, want sample %d under %s", k, r.Ordinal, r.SampleID, r.SampleRow, r.Condition, ordinal, cond)
		}
		v := value(ordinal, cond)
		if r.Results != 1 || r.Claims != ordinal%3 || len(r.Metrics) != 1 || r.Metrics[0].N != 1 || r.Metrics[0].Sum != v || r.Metrics[0].SumSq != v*v {
			t.Errorf("sample %d under %s: %+v, want one result, %d claims, one score of %g", ordinal, cond, r, ordinal%3, v)
		}
	}
	data, err := tally.Of(db).ReportData(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(data.Scores) != 2 {
		t.Fatalf("%d columns of scores, want one per condition", len(data.Scores))
	}
	for _, m := range data.Scores {
		if len(m.Samples) != n || len(m.Values) != n {
			t.Fatalf("%s: %d samples, %d values, want %d", m.Condition, len(m.Samples), len(m.Values), n)
		}
		for i, id := range m.Samples {
			if want := value(ordinals[id], m.Condition); m.Values[m.Starts[i]] != want {
				t.Errorf("%s, sample %d: %g, want %g", m.Condition, ordinals[id], m.Values[m.Starts[i]], want)
			}
		}
	}
}
