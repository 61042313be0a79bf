package store_test

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"assay"
	"assay/store"
	"assay/tally"
)

// seedRun stores a run of n samples × conditions × reps with rubric scores,
// some agent errors and some judge errors.
func seedRun(t *testing.T, db *store.DB, n, reps int, conditions ...string) *store.Run {
	t.Helper()
	ctx := context.Background()
	d := &store.Dataset{Name: "d", Kind: assay.KindQA, SHA256: fmt.Sprint("sha-", n, reps, conditions), Format: "jsonl"}
	if _, err := db.CreateDataset(ctx, d, testSamples(n)); err != nil {
		t.Fatal(err)
	}
	samples, _ := db.Samples(ctx, d.ID, 0, 0)
	run := &store.Run{DatasetID: d.ID, Repetitions: reps, TotalTasks: n * reps * len(conditions)}
	for _, c := range conditions {
		run.Conditions = append(run.Conditions, assay.Condition{Name: c})
	}
	if err := db.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, s := range samples {
		for _, c := range conditions {
			for rep := 1; rep <= reps; rep++ {
				r := &store.Result{RunID: run.ID, SampleRow: s.ID, Condition: c, Repetition: rep, Response: "answer",
					TokensIn: rng.IntN(100), TokensOut: rng.IntN(50), CostUSD: rng.Float64() / 100, LatencyMS: int64(rng.IntN(900)),
					Attempts: 1 + rng.IntN(2), Model: []string{"model-a", "model-b", ""}[rng.IntN(3)],
					CostSource: []store.CostSource{store.CostFromPrices, store.CostFromAgent, store.CostUnknown}[rng.IntN(3)]}
				if r.Attempts > 1 && rng.IntN(2) == 0 {
					r.Retries = []string{"attempt 1: status 503; retrying in 1s"}
				}
				switch rng.IntN(10) {
				case 0:
					r.Error, r.ErrorKind = "agent: timeout", store.ErrorTimeout
				case 1:
					r.Judgements = []store.Judgement{{Evaluator: "rubric", Error: "judge: malformed", ErrorKind: store.ErrorBadResponse,
						TokensIn: 7, CostUSD: 0.001}}
				default:
					r.Judgements = []store.Judgement{{Evaluator: "rubric", TokensIn: 30, TokensOut: 9, CostUSD: 0.002, Scores: []store.Score{
						{Metric: "factual_adherence", Value: float64(1 + rng.IntN(5)), Reasoning: strings.Repeat("why ", 20)},
						{Metric: "completeness", Value: float64(1 + rng.IntN(5))}}},
						{Evaluator: "exact_match", Scores: []store.Score{{Metric: "exact_match", Value: float64(rng.IntN(2))}}}}
				}
				if _, err := db.SaveResult(ctx, r); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	return run
}

// referenceScores and referenceProgress are the straightforward joins over
// the wide rows that ReportData's index-only scans must agree with.
func referenceScores(t *testing.T, raw *sql.DB, runID int64) []store.ScoreRow {
	rows, err := raw.Query(`SELECT s.id, r.sample_id, r.condition, r.repetition, j.evaluator, s.metric, s.value
		FROM scores s JOIN judgements j ON j.id = s.judgement_id JOIN results r ON r.id = s.result_id
		WHERE s.run_id = ? ORDER BY r.condition, j.evaluator, s.metric, r.sample_id, r.repetition`, runID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []store.ScoreRow
	for rows.Next() {
		var s store.ScoreRow
		if err := rows.Scan(&s.ID, &s.SampleRow, &s.Condition, &s.Repetition, &s.Evaluator, &s.Metric, &s.Value); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

func referenceProgress(t *testing.T, raw *sql.DB, runID int64) []store.ConditionProgress {
	rows, err := raw.Query(`SELECT r.condition, count(*), sum(r.error != ''),
		coalesce(sum(r.tokens_in), 0) + coalesce(sum(j.tin), 0), coalesce(sum(r.tokens_out), 0) + coalesce(sum(j.tout), 0),
		coalesce(sum(r.cost_usd), 0) + coalesce(sum(j.cost), 0), coalesce(avg(r.latency_ms), 0),
		sum(r.retries != '[]'), coalesce(sum(j.errs), 0)
		FROM results r LEFT JOIN (SELECT result_id, sum(tokens_in) tin, sum(tokens_out) tout, sum(cost_usd) cost,
			sum(error != '') errs FROM judgements WHERE run_id = ? GROUP BY result_id) j ON j.result_id = r.id
		WHERE r.run_id = ? GROUP BY r.condition ORDER BY r.condition`, runID, runID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []store.ConditionProgress
	for rows.Next() {
		var p store.ConditionProgress
		if err := rows.Scan(&p.Condition, &p.Done, &p.Errors, &p.TokensIn, &p.TokensOut, &p.CostUSD, &p.LatencyMS,
			&p.Retries, &p.JudgeErrors); err != nil {
			t.Fatal(err)
		}
		if p.Errors > 0 {
			p.ErrorKinds = map[store.ErrorKind]int{store.ErrorTimeout: p.Errors}
		}
		if p.JudgeErrors > 0 {
			p.JudgeErrorKinds = map[store.ErrorKind]int{store.ErrorBadResponse: p.JudgeErrors}
		}
		out = append(out, p)
	}
	return out
}

// scoresMatchTheJoin checks ReportData's scores of run against the join, and
// returns a connection of its own to the database and what ReportData read.
func scoresMatchTheJoin(t *testing.T, db *store.DB, run *store.Run) (*sql.DB, *tally.ReportData) {
	t.Helper()
	raw, err := store.OpenRaw(db.Path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	got, err := tally.Of(db).ReportData(context.Background(), run.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := referenceScores(t, raw, run.ID)
	if rows := tally.ScoreRows(got.Scores); !reflect.DeepEqual(rows, want) {
		t.Errorf("ReportData has %d scores, the join %d, or their order differs", len(rows), len(want))
	}
	return raw, got
}

func TestReportDataMatchesTheJoins(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t)
	run := seedRun(t, db, 12, 3, "with-docs", "baseline")
	seedRun(t, db, 3, 2, "other-run") // must not leak into the first
	raw, got := scoresMatchTheJoin(t, db, run)
	progress := referenceProgress(t, raw, run.ID)
	fromProgress, _ := tally.Of(db).RunProgress(ctx, run.ID)
	cost, _ := tally.Of(db).RunCost(ctx, run.ID)
	if len(got.Conditions) != len(progress) || !reflect.DeepEqual(fromProgress, got.Conditions) {
		t.Fatalf("conditions %+v, want %+v, and RunProgress the same", got.Conditions, progress)
	}
	var want float64
	for i, p := range progress {
		g := got.Conditions[i]
		want += p.CostUSD
		if g.Condition != p.Condition || g.Done != p.Done || g.Errors != p.Errors || g.JudgeErrors != p.JudgeErrors ||
			!reflect.DeepEqual(g.ErrorKinds, p.ErrorKinds) || !reflect.DeepEqual(g.JudgeErrorKinds, p.JudgeErrorKinds) ||
			g.TokensIn != p.TokensIn || g.TokensOut != p.TokensOut || g.Retries != p.Retries ||
			!near(g.CostUSD, p.CostUSD) || !near(g.LatencyMS, p.LatencyMS) {
			t.Errorf("condition totals\n got %+v\nwant %+v", g, p)
		}
	}
	if !near(cost, want) {
		t.Errorf("RunCost %v, want %v", cost, want)
	}
	modelsMatchTheCount(t, db, raw, run.ID, got.Models)
	if err := db.SetRunStatus(ctx, run.ID, store.RunCompleted, ""); err != nil {
		t.Fatal(err)
	}
	if n, err := db.ClearFailedTasks(ctx, run.ID); err != nil || n == 0 {
		t.Fatalf("cleared %d failed tasks: %v", n, err)
	}
	after, err := tally.Of(db).ReportData(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	modelsMatchTheCount(t, db, raw, run.ID, after.Models)
}

// modelsMatchTheCount checks a run's models, as ReportData read them,
// against its results counted by model and cost source.
func modelsMatchTheCount(t *testing.T, db *store.DB, raw *sql.DB, runID int64, got []tally.ModelUse) {
	t.Helper()
	var want []tally.ModelUse
	rows, err := raw.Query(`SELECT model, cost_source, count(*) FROM results WHERE run_id = ?
		GROUP BY model, cost_source ORDER BY model, cost_source`, runID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var m tally.ModelUse
		if err := rows.Scan(&m.Model, &m.Source, &m.Results); err != nil {
			t.Fatal(err)
		}
		want = append(want, m)
	}
	if len(want) < 6 || !reflect.DeepEqual(got, want) {
		t.Errorf("models\n got %+v\nwant %+v", got, want)
	}
}

// TestReportDataJoinsItsChunks reads a run whose rows are folded in several
// chunks side by side: each metric's columns are joined in sample order.
func TestReportDataJoinsItsChunks(t *testing.T) {
	db := openTestDB(t)
	run := seedRun(t, db, 700, 1, "b", "a") // 1,400 rows: three chunks, one of them across both conditions
	_, got := scoresMatchTheJoin(t, db, run)
	for _, m := range got.Scores {
		if len(m.Starts) != len(m.Samples)+1 || m.Starts[len(m.Samples)] != int32(m.Len()) {
			t.Errorf("%s under %s: %d samples, %d starts ending at %d of %d scores", m.Metric, m.Condition,
				len(m.Samples), len(m.Starts), m.Starts[len(m.Starts)-1], m.Len())
		}
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

func TestEachResultWalksEveryResultInTaskOrder(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t)
	run := seedRun(t, db, 450, 1, "a", "b") // more samples than one batch
	want, _ := db.Results(ctx, run.ID)
	var got []store.Result
	err := db.EachResult(ctx, run.ID, func(r *store.Result) error { got = append(got, *r); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("EachResult gave %d results, Results %d, or they differ", len(got), len(want))
	}
	stop := fmt.Errorf("stop")
	n := 0
	if err := db.EachResult(ctx, run.ID, func(*store.Result) error { n++; return stop }); err != stop || n != 1 {
		t.Errorf("an error from fn should stop the walk: %v after %d", err, n)
	}
}

func TestDatasetRunsAndSampleNames(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t)
	first := seedRun(t, db, 2, 1, "a")
	second := &store.Run{DatasetID: first.DatasetID, Repetitions: 1,
		Conditions: []assay.Condition{{Name: "a"}}}
	if err := db.CreateRun(ctx, second); err != nil {
		t.Fatal(err)
	}
	runs, err := db.DatasetRuns(ctx, first.DatasetID, 0)
	if err != nil || len(runs) != 2 || runs[0].ID != second.ID || runs[1].ID != first.ID {
		t.Fatalf("dataset runs %v %+v", err, runs)
	}
	if runs, err := db.DatasetRuns(ctx, first.DatasetID, 1); err != nil || len(runs) != 1 || runs[0].ID != second.ID {
		t.Fatalf("the last run of the dataset: %v %+v", err, runs)
	}
	if n, err := db.DatasetRunCount(ctx, first.DatasetID); err != nil || n != 2 {
		t.Fatalf("dataset runs counted: %d %v", n, err)
	}
	names, err := db.SampleIDs(ctx, first.DatasetID)
	samples, _ := db.Samples(ctx, first.DatasetID, 0, 0)
	if err != nil || len(names) != 2 || names[samples[1].ID] != samples[1].SampleID {
		t.Fatalf("sample names %v %v", err, names)
	}
}

// A panel judge that scored nothing in the first chunk of a run's rows (its
// server down for a while, say) is still named in the later ones: the
// chunks' columns join, each score with its judge.
func TestReportDataJoinsChunksAJudgeMissedIn(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t)
	const n = 700
	d := &store.Dataset{Name: "d", Kind: assay.KindQA, SHA256: "panel", Format: "jsonl"}
	if _, err := db.CreateDataset(ctx, d, testSamples(n)); err != nil {
		t.Fatal(err)
	}
	samples, _ := db.Samples(ctx, d.ID, 0, 0)
	run := &store.Run{DatasetID: d.ID, Repetitions: 1, TotalTasks: n, Conditions: []assay.Condition{{Name: "a"}}}
	if err := db.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	for i, s := range samples {
		r := &store.Result{RunID: run.ID, SampleRow: s.ID, Condition: "a", Repetition: 1, Response: "answer"}
		if i >= 600 {
			r.Judgements = append(r.Judgements, store.Judgement{Evaluator: "rubric", Judge: "first", JudgeIndex: 0,
				Scores: []store.Score{{Metric: "completeness", Value: 2}}})
		}
		r.Judgements = append(r.Judgements, store.Judgement{Evaluator: "rubric", Judge: "second", JudgeIndex: 1,
			Scores: []store.Score{{Metric: "completeness", Value: 4}}})
		if _, err := db.SaveResult(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	got, err := tally.Of(db).ReportData(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	judges := map[string]int{}
	for _, s := range tally.ScoreRows(got.Scores) {
		judges[fmt.Sprint(s.JudgeIndex, s.Judge, s.Value)]++
	}
	if want := map[string]int{"0first2": 100, "1second4": n}; !reflect.DeepEqual(judges, want) {
		t.Errorf("scores by place, judge and value: %v, want %v", judges, want)
	}
}

// Results that commit out of repetition order, judged by a panel twice
// each, are read in the report's order: by condition, evaluator, metric,
// sample, repetition, panel place and judge repetition.
func TestReportDataOrdersScoresCommittedOutOfOrder(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t)
	d := &store.Dataset{Name: "d", Kind: assay.KindQA, SHA256: "out-of-order", Format: "jsonl"}
	if _, err := db.CreateDataset(ctx, d, testSamples(4)); err != nil {
		t.Fatal(err)
	}
	samples, _ := db.Samples(ctx, d.ID, 0, 0)
	run := &store.Run{DatasetID: d.ID, Repetitions: 3, TotalTasks: 4 * 3 * 2,
		Conditions: []assay.Condition{{Name: "b"}, {Name: "a"}}}
	if err := db.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	type task struct {
		sample    int64
		condition string
		rep       int
	}
	var tasks []task
	for _, s := range samples {
		for _, c := range []string{"b", "a"} {
			for rep := 1; rep <= 3; rep++ {
				tasks = append(tasks, task{s.ID, c, rep})
			}
		}
	}
	rng.Shuffle(len(tasks), func(i, j int) { tasks[i], tasks[j] = tasks[j], tasks[i] })
	for _, k := range tasks {
		r := &store.Result{RunID: run.ID, SampleRow: k.sample, Condition: k.condition, Repetition: k.rep, Response: "answer"}
		var panel []store.Judgement
		for place := 1; place >= 0; place-- { // the panel's judgements, stored last place first
			for jrep := 1; jrep >= 0; jrep-- {
				panel = append(panel, store.Judgement{Evaluator: "rubric", Judge: fmt.Sprint("judge-", place), JudgeIndex: place,
					JudgeRepetition: jrep, Scores: []store.Score{
						{Metric: "completeness", Value: float64(rng.IntN(5) + 1)}, {Metric: "accuracy", Value: float64(rng.IntN(5) + 1)}}})
			}
		}
		r.Judgements = append(panel, store.Judgement{Evaluator: "exact_match", Scores: []store.Score{{Metric: "exact_match", Value: float64(rng.IntN(2))}}})
		if _, err := db.SaveResult(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	got, err := tally.Of(db).ReportData(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	rows := tally.ScoreRows(got.Scores)
	if len(rows) != len(tasks)*9 {
		t.Fatalf("%d scores, want %d", len(rows), len(tasks)*9)
	}
	ids := map[int64]bool{}
	for i, s := range rows {
		ids[s.ID] = true
		if i == 0 {
			continue
		}
		p := rows[i-1]
		order := cmp.Or(strings.Compare(p.Condition, s.Condition), strings.Compare(p.Evaluator, s.Evaluator), strings.Compare(p.Metric, s.Metric),
			cmp.Compare(p.SampleRow, s.SampleRow), cmp.Compare(p.Repetition, s.Repetition), cmp.Compare(p.JudgeIndex, s.JudgeIndex),
			cmp.Compare(p.JudgeRepetition, s.JudgeRepetition))
		if order >= 0 {
			t.Fatalf("score %d (%+v) comes after %+v", i, s, p)
		}
	}
	if len(ids) != len(rows) {
		t.Errorf("%d scores read, %d of them distinct", len(rows), len(ids))
	}
}
