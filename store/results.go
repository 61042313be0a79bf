package store

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// TaskKey names one task of a run: a sample under a condition, one repetition.
type TaskKey struct {
	SampleRow  int64
	Condition  string
	Repetition int
}

// SaveResult stores a result with its judgements and scores in one transaction.
// A result for a task that already has one is not stored again: saved is false.
// It is committed with the writes that arrive at the same time (committer.go).
func (db *DB) SaveResult(ctx context.Context, r *Result) (saved bool, err error) {
	db.keeps.drop(runTask{r.RunID, TaskKey{r.SampleRow, r.Condition, r.Repetition}})
	err = db.Commit(ctx, func(ctx context.Context, tx Tx) error {
		saved, err = insertNewResult(ctx, tx, db.nowText(), r)
		return err
	})
	return saved && err == nil, err
}

// insertResult stores a result that must be new, with its judgements.
func insertResult(ctx context.Context, tx Tx, now string, r *Result) error {
	saved, err := insertNewResult(ctx, tx, now, r)
	if err == nil && !saved {
		err = fmt.Errorf("result %d/%s/%d: stored twice", r.SampleRow, r.Condition, r.Repetition)
	}
	return err
}

// insertNewResult stores a result with its judgements, unless its task
// already has one.
func insertNewResult(ctx context.Context, tx Tx, now string, r *Result) (saved bool, err error) {
	calls, _ := json.Marshal(nonNilCalls(r.ToolCalls))
	retries, _ := json.Marshal(nonNil(r.Retries))
	r.CreatedAt = parseTime(now)
	args := []any{r.RunID, r.SampleRow, r.Condition, r.Repetition, r.Response, r.Error, kindOf(r.Error, r.ErrorKind),
		r.TokensIn, r.TokensOut, r.CacheReadTokens, r.CacheWriteTokens, r.CostUSD, r.CostSource, r.Model,
		r.LatencyMS, r.Attempts, string(retries), string(calls), r.CreatedAt.Format(timeFormat), r.Turns, r.BatchedCalls}
	insert := insertResultParts
	if tx.db.pg {
		insert = insertResultWhole
	}
	if inserted, err := insert(ctx, tx, r, args); err != nil || !inserted {
		return false, err
	}
	if err := tx.adds.Stored(ctx, tx, r); err != nil {
		return false, err
	}
	return true, nil
}

// insertResultParts stores the result whose row's arguments are args
// (qInsertResult's) with its judgements and their scores, and removes its
// task's kept parts, a statement for each; inserted is false when its
// task already had a result (nothing is then written).
func insertResultParts(ctx context.Context, tx Tx, r *Result, args []any) (inserted bool, err error) {
	res, err := tx.ExecPrepared(ctx, qInsertResult, args...)
	if err != nil {
		return false, fmt.Errorf("insert result: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return false, nil
	}
	if r.ID, err = res.LastInsertId(); err != nil {
		return false, fmt.Errorf("insert result: %w", err)
	}
	for i := range r.Judgements {
		if err := insertJudgement(ctx, tx, r, &r.Judgements[i]); err != nil {
			return false, err
		}
	}
	if _, err := tx.ExecPrepared(ctx, qDeletePending,
		r.RunID, r.SampleRow, r.Condition, r.Repetition); err != nil {
		return false, fmt.Errorf("insert result: %w", err)
	}
	return true, nil
}

func insertJudgement(ctx context.Context, tx Tx, r *Result, j *Judgement) error {
	claims, _ := json.Marshal(nonNil(j.UnverifiedClaims))
	res, err := tx.ExecPrepared(ctx, qInsertJudgement,
		r.ID, r.RunID, j.Evaluator, JudgeSlot(j.JudgeIndex, j.JudgeRepetition), j.Judge, j.Seed, j.Error, kindOf(j.Error, j.ErrorKind), max(j.Attempts, 1),
		j.Raw, j.Detail, string(claims), j.TokensIn, j.TokensOut, j.CacheReadTokens, j.CacheWriteTokens, j.CostUSD, j.LatencyMS, j.BatchedCalls)
	if err == nil {
		j.ID, err = res.LastInsertId()
	}
	if err != nil {
		return fmt.Errorf("insert judgement %s: %w", j.Evaluator, err)
	}
	for rest := j.Scores; len(rest) > 0; {
		n := min(len(rest), len(qInsertScores))
		if err := insertScores(ctx, tx, r, j.ID, rest[:n]); err != nil {
			return err
		}
		rest = rest[n:]
	}
	return nil
}

// insertScores stores a judgement's scores with one statement, and gives
// each its id. A statement per score cost its binding, stepping and reset
// each time. The rows take ids one after another in the statement's
// order, as SQLite gives a new row of a table keyed by an INTEGER PRIMARY
// KEY one more than the largest: the last one's id names them all.
// Returning each id cost a query's rows and a map. (Postgres stores a
// result whole: results_pg.go.)
func insertScores(ctx context.Context, tx Tx, r *Result, judgement int64, scores []Score) error {
	args := make([]any, 0, 6*len(scores))
	for i := range scores {
		s := &scores[i]
		args = append(args, judgement, r.ID, r.RunID, s.Metric, s.Value, s.Reasoning)
	}
	res, err := tx.ExecPrepared(ctx, qInsertScores[len(scores)-1], args...)
	if err != nil {
		return fmt.Errorf("insert scores: %w", err)
	}
	last, err := res.LastInsertId()
	if err != nil {
		return fmt.Errorf("insert scores: %w", err)
	}
	for i := range scores {
		scores[i].ID = last - int64(len(scores)-1-i)
	}
	return nil
}

// DoneTasks returns the tasks of a run that already have a result.
func (db *DB) DoneTasks(ctx context.Context, runID int64) (map[TaskKey]bool, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT sample_id, condition, repetition FROM results WHERE run_id = ?`, runID)
	if err != nil {
		return nil, fmt.Errorf("done tasks: %w", err)
	}
	defer rows.Close()
	done := map[TaskKey]bool{}
	for rows.Next() {
		var k TaskKey
		if err := rows.Scan(&k.SampleRow, &k.Condition, &k.Repetition); err != nil {
			return nil, fmt.Errorf("done tasks: %w", err)
		}
		done[k] = true
	}
	return done, rows.Err()
}

// ConditionProgress is how far a run has come under one condition.
type ConditionProgress struct {
	Condition       string
	Done            int
	Errors          int
	JudgeErrors     int
	ErrorKinds      map[ErrorKind]int // of Errors; nil without any
	JudgeErrorKinds map[ErrorKind]int // of JudgeErrors; nil without any
	TokensIn        int
	TokensOut       int
	CostUSD         float64 // agent and judge calls
	LatencyMS       float64 // mean agent latency
	Retries         int     // results whose agent calls were retried after a failure
	ToolCalls       int     // MCP tool calls the agent made
	ToolErrors      int     // of which failed
}

// ScoreRow is one score with the task it belongs to, for statistics.
type ScoreRow struct {
	ID         int64 // the score's row id, which verdicts name
	SampleRow  int64
	Condition  string
	Repetition int
	// JudgeRepetition counts the judge's scores of one answer from 0; a
	// deterministic evaluator's is 0. Judge and JudgeIndex name the panel
	// judge ("" and 0 for a run's one judge).
	JudgeRepetition int
	Judge           string
	JudgeIndex      int
	Evaluator       string
	Metric          string
	Value           float64
}

// Results returns a run's results with their judgements and scores, in task order.
func (db *DB) Results(ctx context.Context, runID int64) ([]Result, error) {
	return db.queryResults(ctx, false, `WHERE r.run_id = ?`, runID)
}

// SampleResults returns a run's results for one sample.
func (db *DB) SampleResults(ctx context.Context, runID, sampleID int64) ([]Result, error) {
	return db.queryResults(ctx, false, `WHERE r.run_id = ? AND r.sample_id = ?`, runID, sampleID)
}

// queryResults reads the results the where clause selects, with their
// judgements and scores; lean reads only what EachScored gives.
func (db *DB) queryResults(ctx context.Context, lean bool, where string, args ...any) ([]Result, error) {
	columns := `r.id, r.run_id, r.sample_id, r.condition, r.repetition, r.response, r.error, r.error_kind, r.tokens_in,
		r.tokens_out, r.cache_read_tokens, r.cache_write_tokens, r.cost_usd, r.cost_source, r.model, r.latency_ms, r.attempts,
		r.retries, r.tool_calls, r.created_at, r.turns, r.batched_calls`
	if lean {
		columns = `r.id, r.run_id, r.sample_id, r.condition, r.repetition, r.error, r.error_kind, r.tokens_in, r.tokens_out,
			r.cost_usd, r.latency_ms, r.attempts, r.tool_calls, r.model`
	}
	rows, err := db.read.QueryContext(ctx, `SELECT `+columns+`
		FROM results r `+where+` ORDER BY r.sample_id, r.condition, r.repetition`, args...)
	if err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	defer rows.Close()
	var out []Result
	byID := map[int64]int{}
	for rows.Next() {
		var r Result
		var retries, calls, created string
		var err error
		if lean {
			err = rows.Scan(Int64Col{&r.ID}, Int64Col{&r.RunID}, Int64Col{&r.SampleRow}, &r.Condition, IntCol{&r.Repetition},
				&r.Error, textCol[ErrorKind]{&r.ErrorKind}, IntCol{&r.TokensIn}, IntCol{&r.TokensOut}, floatCol{&r.CostUSD},
				Int64Col{&r.LatencyMS}, IntCol{&r.Attempts}, &calls, &r.Model)
		} else {
			err = rows.Scan(Int64Col{&r.ID}, Int64Col{&r.RunID}, Int64Col{&r.SampleRow}, &r.Condition, IntCol{&r.Repetition},
				&r.Response, &r.Error, textCol[ErrorKind]{&r.ErrorKind}, IntCol{&r.TokensIn}, IntCol{&r.TokensOut},
				IntCol{&r.CacheReadTokens}, IntCol{&r.CacheWriteTokens}, floatCol{&r.CostUSD}, textCol[CostSource]{&r.CostSource},
				&r.Model, Int64Col{&r.LatencyMS}, IntCol{&r.Attempts}, &retries, &calls, &created, IntCol{&r.Turns}, IntCol{&r.BatchedCalls})
			decodeList(retries, &r.Retries)
			r.CreatedAt = parseTime(created)
		}
		if err != nil {
			return nil, fmt.Errorf("results: %w", err)
		}
		decodeList(calls, &r.ToolCalls)
		byID[r.ID] = len(out)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	return out, db.attachJudgements(ctx, out, byID, lean, where, args)
}

// attachJudgements reads the judgements of the results the where clause
// selects, then their scores, and gives each result its judgements and each
// judgement its scores, in the order they were stored. Judgements and scores
// are read apart: read joined, a judgement's raw answer came once per score.
// A judgement of a result stored after the results were read is left out.
func (db *DB) attachJudgements(ctx context.Context, results []Result, byID map[int64]int, lean bool, where string, args []any) error {
	if len(results) == 0 {
		return nil
	}
	places := map[int64]judgementPlace{}
	columns := `j.id, j.result_id, j.evaluator, j.judge_repetition, j.judge, j.error, j.error_kind, j.unverified_claims,
		j.seed, j.attempts, j.raw, j.detail, j.tokens_in, j.tokens_out, j.cost_usd, j.latency_ms, j.cache_read_tokens, j.cache_write_tokens, j.batched_calls`
	if lean {
		columns = `j.id, j.result_id, j.evaluator, j.judge_repetition, j.judge, j.error, j.error_kind, j.unverified_claims`
	}
	err := EachRow(ctx, db.read, `SELECT `+columns+` FROM judgements j JOIN results r ON r.id = j.result_id `+where, args, func(rows *sql.Rows) error {
		j, resultID, err := scanJudgement(rows, lean)
		if err != nil {
			return err
		}
		if i, ok := byID[resultID]; ok {
			places[j.ID] = judgementPlace{i, len(results[i].Judgements)}
			results[i].Judgements = append(results[i].Judgements, j)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("judgements: %w", err)
	}
	if err := db.attachScores(ctx, results, places, where, args); err != nil {
		return fmt.Errorf("scores: %w", err)
	}
	for i := range results {
		js := results[i].Judgements
		slices.SortFunc(js, func(a, b Judgement) int { return cmp.Compare(a.ID, b.ID) })
		for k := range js {
			slices.SortFunc(js[k].Scores, func(a, b Score) int { return cmp.Compare(a.ID, b.ID) })
		}
	}
	return nil
}

// judgementPlace is where a judgement sits: its result's index, and its
// own among the result's judgements.
type judgementPlace struct{ result, judgement int }

// scanJudgement scans a judgement's row, lean or whole, and the id of
// the result it judges.
func scanJudgement(rows *sql.Rows, lean bool) (Judgement, int64, error) {
	var j Judgement
	var resultID int64
	var claims string
	var seed sql.NullInt64
	var err error
	if lean {
		err = rows.Scan(Int64Col{&j.ID}, Int64Col{&resultID}, &j.Evaluator, IntCol{&j.JudgeRepetition}, &j.Judge, &j.Error,
			textCol[ErrorKind]{&j.ErrorKind}, &claims)
	} else {
		err = rows.Scan(Int64Col{&j.ID}, Int64Col{&resultID}, &j.Evaluator, IntCol{&j.JudgeRepetition}, &j.Judge, &j.Error,
			textCol[ErrorKind]{&j.ErrorKind}, &claims, &seed, IntCol{&j.Attempts}, &j.Raw, &j.Detail, IntCol{&j.TokensIn},
			IntCol{&j.TokensOut}, floatCol{&j.CostUSD}, Int64Col{&j.LatencyMS}, IntCol{&j.CacheReadTokens}, IntCol{&j.CacheWriteTokens}, IntCol{&j.BatchedCalls})
	}
	if err != nil {
		return j, 0, err
	}
	j.JudgeIndex, j.JudgeRepetition = FromSlot(j.JudgeRepetition)
	if seed.Valid {
		v := int(seed.Int64)
		j.Seed = &v
	}
	decodeList(claims, &j.UnverifiedClaims)
	return j, resultID, nil
}

// attachScores gives each judgement placed its scores.
func (db *DB) attachScores(ctx context.Context, results []Result, places map[int64]judgementPlace, where string, args []any) error {
	return EachRow(ctx, db.read, `SELECT s.id, s.judgement_id, s.metric, s.value, s.reasoning
		FROM scores s JOIN judgements j ON j.id = s.judgement_id JOIN results r ON r.id = j.result_id `+where, args, func(rows *sql.Rows) error {
		var s Score
		var judgementID int64
		if err := rows.Scan(Int64Col{&s.ID}, Int64Col{&judgementID}, &s.Metric, floatCol{&s.Value}, &s.Reasoning); err != nil {
			return err
		}
		if at, ok := places[judgementID]; ok {
			j := &results[at.result].Judgements[at.judgement]
			j.Scores = append(j.Scores, s)
		}
		return nil
	})
}

// decodeList decodes a list stored as JSON. Most rows hold "[]", which
// is read without the decoder: a tenth of an export's reading went to
// decoding them.
func decodeList[T any](text string, into *[]T) {
	if text == "[]" {
		*into = []T{}
		return
	}
	_ = json.Unmarshal([]byte(text), into)
}

// kindOf is the kind stored with an error: none without one, other when
// the caller did not say.
func kindOf(message string, kind ErrorKind) ErrorKind {
	switch {
	case message == "":
		return ""
	case kind == "":
		return ErrorOther
	}
	return kind
}

func nonNilCalls(c []ToolCall) []ToolCall {
	if c == nil {
		return []ToolCall{}
	}
	return c
}

// judgeSlots is how many repetitions one panel judge has room for in the
// judge_repetition column, which holds place × judgeSlots + repetition.
const judgeSlots = 1000

func JudgeSlot(index, rep int) int { return index*judgeSlots + rep }

// FromSlot reads a judge_repetition column: the panel place and the repetition.
func FromSlot(slot int) (index, rep int) { return slot / judgeSlots, slot % judgeSlots }

const qInsertResult = `INSERT INTO results (run_id, sample_id, condition, repetition, response, error,
		error_kind, tokens_in, tokens_out, cache_read_tokens, cache_write_tokens, cost_usd, cost_source, model,
		latency_ms, attempts, retries, tool_calls, created_at, turns, batched_calls)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (run_id, sample_id, condition, repetition) DO NOTHING`

const qDeletePending = `DELETE FROM pending_work WHERE run_id = ? AND sample_id = ? AND condition = ? AND repetition = ?`

const qInsertJudgement = `INSERT INTO judgements (result_id, run_id, ` + judgementColumns + `)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

const qInsertScoresHead = `INSERT INTO scores (judgement_id, result_id, run_id, metric, value, reasoning) VALUES `

// qInsertScores[n-1] inserts n scores of one judgement.
var qInsertScores = func() []string {
	out := make([]string, 8)
	for n := range out {
		out[n] = qInsertScoresHead +
			strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?, ?, ?), ", n+1), ", ")
	}
	return out
}()
