package tally

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"assay/store"
)

// This file keeps a run's aggregates (migrations 0020, 0025, 0027): per
// sample and condition, every score it has, as lines of text
// (sample_scores), and its counts and sums (sample_sums, samplesums.go);
// per condition, its totals; per model that answered, its count. A
// result's transaction adds to each (to the totals and counts once per
// batch of the committer, batchtotals.go), so they always agree with the
// results, judgements and scores committed.
//
// The lines of sample_scores.scores, fields apart by \x1f:
//
//	j JUDGEMENT_ID RESULT_ID REPETITION SLOT EVALUATOR JUDGE
//	s SCORE_ID VALUE METRIC
//
// each judgement's scores right after its line. A score's id is left out
// (an empty field) when it follows the one of the score before it in its
// judgement, as a judgement's scores' ids do: a row of three results
// judged three times each (27 scores) then fits in a page of the table,
// where it spilled to a page of its own.
// A value is written as strconv writes the shortest text that reads back as
// the same float64; a name holding a separator or a newline is quoted.

const fieldSep = '\x1f'

// appendName writes a name so that parsing gives it back.
func appendName(b []byte, name string) []byte {
	if strings.ContainsAny(name, "\x1f\n\r\x00") || strings.HasPrefix(name, `"`) {
		return strconv.AppendQuote(b, name)
	}
	return append(b, name...)
}

// readName reads back a name appendName wrote.
func readName(s string) (string, error) {
	if strings.HasPrefix(s, `"`) {
		return strconv.Unquote(s)
	}
	return s, nil
}

// scoreLines writes a result's judgements and scores as sample_scores lines.
func scoreLines(r *store.Result) string {
	var b []byte
	for i := range r.Judgements {
		j := &r.Judgements[i]
		b = append(b, 'j', fieldSep)
		b = strconv.AppendInt(b, j.ID, 10)
		b = append(b, fieldSep)
		b = strconv.AppendInt(b, r.ID, 10)
		b = append(b, fieldSep)
		b = strconv.AppendInt(b, int64(r.Repetition), 10)
		b = append(b, fieldSep)
		b = strconv.AppendInt(b, int64(store.JudgeSlot(j.JudgeIndex, j.JudgeRepetition)), 10)
		b = append(b, fieldSep)
		b = appendName(b, j.Evaluator)
		b = append(b, fieldSep)
		b = appendName(b, j.Judge)
		b = append(b, '\n')
		for k := range j.Scores {
			next := k > 0 && j.Scores[k].ID == j.Scores[k-1].ID+1
			b = appendScoreLine(b, j.Scores[k].ID, next, j.Scores[k].Value, j.Scores[k].Metric)
		}
	}
	return string(b)
}

// appendScoreLine writes a score's line; next leaves out its id, the one
// after the score's before it.
func appendScoreLine(b []byte, id int64, next bool, value float64, metric string) []byte {
	b = append(b, 's', fieldSep)
	if !next {
		b = strconv.AppendInt(b, id, 10)
	}
	b = append(b, fieldSep)
	b = strconv.AppendFloat(b, value, 'g', -1, 64)
	b = append(b, fieldSep)
	b = appendName(b, metric)
	return append(b, '\n')
}

// sampleCounts are what a result adds to its sample_scores row.
type sampleCounts struct {
	results, errors, judgeErrors, claims int
	scores                               string
	sums                                 rowSums // the row's, with the result's scores
}

// add adds another result's counts, stored after.
func (c *sampleCounts) add(d sampleCounts) {
	c.results += d.results
	c.errors += d.errors
	c.judgeErrors += d.judgeErrors
	c.claims += d.claims
	c.scores += d.scores
}

// conditionCounts are what a result adds to its condition's totals.
type conditionCounts struct {
	store.ConditionProgress
	latencyMS int64 // summed
}

// add adds another result's counts, stored after: costs add up in the
// order results are stored, as the column does.
func (c *conditionCounts) add(d conditionCounts) {
	c.Done += d.Done
	c.Errors += d.Errors
	c.JudgeErrors += d.JudgeErrors
	c.TokensIn += d.TokensIn
	c.TokensOut += d.TokensOut
	c.CostUSD += d.CostUSD
	c.latencyMS += d.latencyMS
	c.Retries += d.Retries
	c.ToolCalls += d.ToolCalls
	c.ToolErrors += d.ToolErrors
}

// countsOf is what a result, with its judgements and scores, adds to its
// run's aggregates.
func countsOf(r *store.Result) (sampleCounts, conditionCounts) {
	s := sampleCounts{results: 1, errors: b2i(r.Error != ""), scores: scoreLines(r)}
	c := conditionCounts{ConditionProgress: store.ConditionProgress{Done: 1, Errors: s.errors, TokensIn: r.TokensIn,
		TokensOut: r.TokensOut, CostUSD: r.CostUSD, Retries: b2i(len(r.Retries) > 0), ToolCalls: len(r.ToolCalls)},
		latencyMS: r.LatencyMS}
	for i := range r.Judgements {
		j := &r.Judgements[i]
		s.judgeErrors += b2i(j.Error != "")
		s.claims += len(j.UnverifiedClaims)
		c.TokensIn += j.TokensIn
		c.TokensOut += j.TokensOut
		c.CostUSD += j.CostUSD
	}
	c.JudgeErrors = s.judgeErrors
	for _, call := range r.ToolCalls {
		c.ToolErrors += b2i(call.IsError)
	}
	return s, c
}

// addAggregates adds a result just stored, with its judgements and scores,
// to its run's aggregates, in the transaction that stored it.
func addAggregates(ctx context.Context, tx store.Tx, totals *batchTotals, r *store.Result) error {
	s, c := countsOf(r)
	if err := addSums(ctx, tx, r, &s); err != nil {
		return err
	}
	if s.scores != "" {
		if _, err := tx.ExecPrepared(ctx, qAddSampleScores, r.RunID, r.Condition, r.SampleRow, s.scores); err != nil {
			return fmt.Errorf("sample aggregates: %w", err)
		}
	}
	totals.add(r, c) // with the run's count, before the transaction commits (batchtotals.go)
	return nil
}

// addSums adds a result's counts and sums to its sample's row. The first
// repetition of a task usually makes the row: it is then written whole,
// without reading it first; else,
// or when the row was there (a task done again after others of its
// sample), the row's sums are read and added to.
func addSums(ctx context.Context, tx store.Tx, r *store.Result, s *sampleCounts) error {
	if hasScores(r) { // else the row's sums stay as they are
		if r.Repetition == 1 {
			s.sums = rowSums(nil).add(r)
			res, err := tx.ExecPrepared(ctx, qNewSampleSums,
				r.RunID, r.Condition, r.SampleRow, s.results, s.errors, s.judgeErrors, s.claims, s.sums.text())
			if err != nil {
				return fmt.Errorf("sample aggregates: %w", err)
			}
			if n, _ := res.RowsAffected(); n == 1 {
				return nil
			}
		}
		kept, err := tx.QueryTextPrepared(ctx, qSampleSums, r.RunID, r.Condition, r.SampleRow)
		if err != nil {
			return fmt.Errorf("sample aggregates: %w", err)
		}
		if s.sums, err = parseSums(kept, nil, nil); err != nil {
			return fmt.Errorf("sample aggregates of sample %d under %s: %w", r.SampleRow, r.Condition, err)
		}
		s.sums = s.sums.add(r)
	}
	if _, err := tx.ExecPrepared(ctx, qAddSampleSums,
		r.RunID, r.Condition, r.SampleRow, s.results, s.errors, s.judgeErrors, s.claims, s.sums.text()); err != nil {
		return fmt.Errorf("sample aggregates: %w", err)
	}
	return nil
}

// RebuildAggregates computes a run's aggregates again from its results,
// judgements and scores, as the transactions that stored them would have
// kept them: what opening the database does for runs stored before
// aggregates were kept (and what clearing failed tasks does).
func (t *Tally) RebuildAggregates(ctx context.Context, runID int64) error {
	tx, err := t.db.BeginWrite(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := rebuildAggregates(ctx, tx, runID); err != nil {
		return err
	}
	return tx.Commit()
}

// rebuildAggregates replaces a run's aggregates by ones computed from its
// rows, reading results, judgements and scores in the order they were
// stored: the same sums, to the last bit, as adding them result by result.
func rebuildAggregates(ctx context.Context, tx *sql.Tx, runID int64) error {
	for _, table := range []string{"sample_scores", "sample_sums", "condition_totals", "model_totals", "aggregates_pending", "sample_stats_kept", "report_scores_kept"} {
		if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE run_id = ?`, runID); err != nil {
			return fmt.Errorf("rebuild aggregates: %w", err)
		}
	}
	results, err := store.StoredResults(ctx, tx, runID, "")
	if err != nil {
		return err
	}
	var samples sampleRows
	totals := map[string]*conditionCounts{}
	models := map[ModelUse]int{}
	for i := range results {
		r := &results[i]
		s, c := countsOf(r)
		samples.add(r, s)
		if totals[r.Condition] == nil {
			totals[r.Condition] = &conditionCounts{}
		}
		totals[r.Condition].add(c)
		models[ModelUse{Model: r.Model, Source: r.CostSource}]++
	}
	if err := samples.write(ctx, tx, runID); err != nil {
		return err
	}
	for name, c := range totals {
		if _, err := tx.ExecContext(ctx, qAddConditionTotals, runID, name, c.Done, c.Errors, c.JudgeErrors, c.TokensIn, c.TokensOut, c.CostUSD, c.latencyMS,
			c.Retries, c.ToolCalls, c.ToolErrors); err != nil {
			return fmt.Errorf("rebuild aggregates: %w", err)
		}
	}
	for m, n := range models {
		if _, err := tx.ExecContext(ctx, qAddModelTotals, runID, m.Model, m.Source, n); err != nil {
			return fmt.Errorf("rebuild aggregates: %w", err)
		}
	}
	return nil
}

// sampleRows are the sample_sums and sample_scores rows of results added
// in the order stored, in the order first met.
type sampleRows struct {
	rows  map[SampleKey]*sampleCounts
	order []SampleKey
}

// add adds a result with its counts (countsOf).
func (s *sampleRows) add(r *store.Result, c sampleCounts) {
	k := SampleKey{r.SampleRow, r.Condition}
	row := s.rows[k]
	if row == nil {
		if s.rows == nil {
			s.rows = map[SampleKey]*sampleCounts{}
		}
		row = &sampleCounts{}
		s.rows[k] = row
		s.order = append(s.order, k)
	}
	row.add(c)
	row.sums = row.sums.add(r)
}

// write inserts the rows, which the run must not have yet.
func (s *sampleRows) write(ctx context.Context, tx *sql.Tx, runID int64) error {
	insertSums, err := tx.PrepareContext(ctx, qAddSampleSums)
	if err != nil {
		return fmt.Errorf("sample aggregates: %w", err)
	}
	defer insertSums.Close()
	insertScores, err := tx.PrepareContext(ctx, qAddSampleScores)
	if err != nil {
		return fmt.Errorf("sample aggregates: %w", err)
	}
	defer insertScores.Close()
	for _, k := range s.order {
		row := s.rows[k]
		if _, err := insertSums.ExecContext(ctx, runID, k.Condition, k.SampleRow, row.results, row.errors, row.judgeErrors, row.claims, row.sums.text()); err != nil {
			return fmt.Errorf("sample aggregates: %w", err)
		}
		if row.scores == "" {
			continue
		}
		if _, err := insertScores.ExecContext(ctx, runID, k.Condition, k.SampleRow, row.scores); err != nil {
			return fmt.Errorf("sample aggregates: %w", err)
		}
	}
	return nil
}

// chunkRows is how many rows one worker folds at a time.
const chunkRows = 512

// foldChunks runs a query and folds its rows chunkRows at a time on a
// worker per core while later rows are read: scan reads a row, and each
// worker folds with a fold of its own from newFold, so that it may reuse
// its room. It returns what the chunks folded into, in the rows' order.
// A chunk's rows, once folded, are the room of a chunk read later: fold
// must keep nothing that points into them.
func foldChunks[R, O any](ctx context.Context, q store.Querier, query string, args []any, scan func(*sql.Rows) (R, error),
	newFold func() func([]R) (O, error)) ([]O, error) {
	type chunk struct {
		rows []R
		out  O
		err  error
	}
	var chunks []*chunk
	work := make(chan *chunk)
	room := make(chan []R, runtime.GOMAXPROCS(0)+1)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		fold := newFold()
		wg.Go(func() {
			for c := range work {
				c.out, c.err = fold(c.rows)
				select {
				case room <- c.rows[:0]:
				default:
				}
				c.rows = nil
			}
		})
	}
	var cur *chunk
	err := store.EachRow(ctx, q, query, args, func(rows *sql.Rows) error {
		r, err := scan(rows)
		if err != nil {
			return err
		}
		if cur == nil {
			cur = &chunk{}
			select {
			case cur.rows = <-room:
			default:
				cur.rows = make([]R, 0, chunkRows)
			}
			chunks = append(chunks, cur)
		}
		if cur.rows = append(cur.rows, r); len(cur.rows) == chunkRows {
			work <- cur
			cur = nil
		}
		return nil
	})
	if cur != nil {
		work <- cur
	}
	close(work)
	wg.Wait()
	if err != nil {
		return nil, err
	}
	out := make([]O, len(chunks))
	for i, c := range chunks {
		if c.err != nil {
			return nil, c.err
		}
		out[i] = c.out
	}
	return out, nil
}

// backfillAggregates computes the aggregates of the runs stored before they
// were kept, one run per transaction.
func (t *Tally) backfillAggregates(ctx context.Context) error {
	var pending []int64
	if err := store.EachRow(ctx, t.db.Read(), `SELECT run_id FROM aggregates_pending ORDER BY run_id`, nil, func(rows *sql.Rows) error {
		var id int64
		err := rows.Scan(&id)
		pending = append(pending, id)
		return err
	}); err != nil {
		return fmt.Errorf("aggregates pending: %w", err)
	}
	for _, id := range pending {
		if err := t.RebuildAggregates(ctx, id); err != nil {
			return fmt.Errorf("run %d: %w", id, err)
		}
	}
	return nil
}

// aggregateJudgement is a judgement line of sample_scores.
type aggregateJudgement struct {
	id, result int64
	rep, slot  int
	evaluator  string
	judge      string
}

// aggregateScore is a score line of sample_scores.
type aggregateScore struct {
	id     int64
	at     int // its judgement's place in sampleLines.judgements
	value  float64
	metric string
}

// sampleLines are the judgements and scores of one sample_scores row.
type sampleLines struct {
	judgements []aggregateJudgement
	scores     []aggregateScore
}

// names keeps one copy of each name a scan meets. A scan meets a few names
// over and over: the last ones met are looked for first, by comparing
// them, before the map, which hashes the name.
type names struct {
	seen map[string]string
	last [8]string
	next int
}

func (n *names) intern(s string) string {
	for i := range n.last {
		if n.last[i] == s {
			return s
		}
	}
	v, ok := n.seen[s]
	if !ok {
		if n.seen == nil {
			n.seen = map[string]string{}
		}
		n.seen[s], v = s, s
	}
	n.last[n.next%len(n.last)] = v
	n.next++
	return v
}

// parseLines reads the lines of a sample_scores row.
func parseLines(text string, in *names) (sampleLines, error) {
	var out sampleLines
	err := out.parse(text, in)
	return out, err
}

// parse reads the lines of a sample_scores row into l, reusing its room.
func (l *sampleLines) parse(text string, in *names) error {
	l.judgements, l.scores = l.judgements[:0], l.scores[:0]
	for line := range strings.Lines(text) {
		line = strings.TrimSuffix(line, "\n")
		if err := l.parseLine(line, in); err != nil {
			return fmt.Errorf("unreadable line %q: %w", line, err)
		}
	}
	return nil
}

// parseLine reads one line of a sample_scores row into l.
func (l *sampleLines) parseLine(line string, in *names) error {
	f := lineFields(line)
	kind, err := f.text()
	if err != nil {
		return err
	}
	switch kind {
	case "j":
		j, err := judgementLine(&f, in)
		if err != nil {
			return err
		}
		l.judgements = append(l.judgements, j)
	case "s":
		if err := l.scoreLine(&f, in); err != nil {
			return err
		}
	default:
		return errors.New("no such kind of line")
	}
	return f.done()
}

// judgementLine reads a judgement's fields: its id, its result's, its
// repetition and judge's slot, its evaluator and judge.
func judgementLine(f *fields, in *names) (aggregateJudgement, error) {
	var j aggregateJudgement
	var rep, slot int64
	var err error
	if j.id, err = f.int(); err != nil {
		return j, err
	}
	if j.result, err = f.int(); err != nil {
		return j, err
	}
	if rep, err = f.int(); err != nil {
		return j, err
	}
	if slot, err = f.int(); err != nil {
		return j, err
	}
	j.rep, j.slot = int(rep), int(slot)
	if j.evaluator, err = f.name(); err != nil {
		return j, err
	}
	if j.judge, err = f.name(); err != nil {
		return j, err
	}
	j.evaluator, j.judge = in.intern(j.evaluator), in.intern(j.judge)
	return j, nil
}

// scoreLine reads a score of the last judgement: its id (left out, the
// one after the score's before it), its value and metric.
func (l *sampleLines) scoreLine(f *fields, in *names) error {
	if len(l.judgements) == 0 {
		return errors.New("a score before any judgement")
	}
	s := aggregateScore{at: len(l.judgements) - 1}
	var err error
	if f.empty() {
		if n := len(l.scores); n == 0 || l.scores[n-1].at != s.at {
			return errors.New("a score's id left out after no score of its judgement")
		}
		s.id = l.scores[len(l.scores)-1].id + 1
	} else if s.id, err = f.int(); err != nil {
		return err
	}
	if s.value, err = f.float(); err != nil {
		return err
	}
	if s.metric, err = f.name(); err != nil {
		return err
	}
	s.metric = in.intern(s.metric)
	l.scores = append(l.scores, s)
	return nil
}

// qAddSampleSums adds a result to its sample_sums row; sums are the row's
// sums with the result's scores, empty when it has none (the row's are kept).
const qAddSampleSums = `INSERT INTO sample_sums (run_id, condition, sample_id, results, errors, judge_errors, claims, sums)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (run_id, condition, sample_id) DO UPDATE SET results = sample_sums.results + excluded.results,
			errors = sample_sums.errors + excluded.errors, judge_errors = sample_sums.judge_errors + excluded.judge_errors,
			claims = sample_sums.claims + excluded.claims,
			sums = CASE WHEN excluded.sums = '' THEN sample_sums.sums ELSE excluded.sums END`

// qNewSampleSums writes a sample_sums row that is not there yet.
const qNewSampleSums = `INSERT INTO sample_sums (run_id, condition, sample_id, results, errors, judge_errors, claims, sums)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (run_id, condition, sample_id) DO NOTHING`

// qAddSampleScores adds a result's lines to its sample_scores row.
const qAddSampleScores = `INSERT INTO sample_scores (run_id, condition, sample_id, scores) VALUES (?, ?, ?, ?)
		ON CONFLICT (run_id, condition, sample_id) DO UPDATE SET scores = sample_scores.scores || excluded.scores`

const qSampleSums = `SELECT sums FROM sample_sums WHERE run_id = ? AND condition = ? AND sample_id = ?`

// hasScores reports whether a result has a score.
func hasScores(r *store.Result) bool {
	for i := range r.Judgements {
		if len(r.Judgements[i].Scores) > 0 {
			return true
		}
	}
	return false
}

const qAddConditionTotals = `INSERT INTO condition_totals (run_id, condition, done, errors, judge_errors,
		tokens_in, tokens_out, cost_usd, latency_ms, retries, tool_calls, tool_errors)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (run_id, condition) DO UPDATE SET done = condition_totals.done + excluded.done, errors = condition_totals.errors + excluded.errors,
			judge_errors = condition_totals.judge_errors + excluded.judge_errors, tokens_in = condition_totals.tokens_in + excluded.tokens_in,
			tokens_out = condition_totals.tokens_out + excluded.tokens_out, cost_usd = condition_totals.cost_usd + excluded.cost_usd,
			latency_ms = condition_totals.latency_ms + excluded.latency_ms, retries = condition_totals.retries + excluded.retries,
			tool_calls = condition_totals.tool_calls + excluded.tool_calls, tool_errors = condition_totals.tool_errors + excluded.tool_errors`

// qAddModelTotals counts results by the model that answered and their cost's source.
const qAddModelTotals = `INSERT INTO model_totals (run_id, model, cost_source, results) VALUES (?, ?, ?, ?)
		ON CONFLICT (run_id, model, cost_source) DO UPDATE SET results = model_totals.results + excluded.results`
