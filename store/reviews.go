package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"assay"
)

// The verdicts a reviewer gives a score.
const (
	VerdictAgree    = "agree"
	VerdictOverride = "override"
)

// Review is one reviewer's verdict on one score of the judge (or of a
// deterministic evaluator): agree, or override with a value of their own.
type Review struct {
	ID         int64     `json:"-"`
	RunID      int64     `json:"-"`
	ScoreID    int64     `json:"score_id"`
	Reviewer   string    `json:"reviewer"`
	Verdict    string    `json:"verdict"`
	JudgeValue float64   `json:"judge_value"`
	Value      float64   `json:"value"` // the reviewer's value: the judge's when they agree
	Note       string    `json:"note"`
	Link       string    `json:"-"` // the review link it came through: its Key
	At         time.Time `json:"at"`
	Seq        int64     `json:"-"` // the run's number for it, higher each time one is given
	// What the score is of, filled by Verdicts.
	Evaluator  string `json:"evaluator"`
	Metric     string `json:"metric"`
	Condition  string `json:"condition"`
	SampleRow  int64  `json:"sample_row_id"`
	Repetition int    `json:"repetition"`
}

// ScoreInfo is a score with what a verdict on it needs to know.
type ScoreInfo struct {
	ID, RunID, ResultID, SampleRow int64
	Condition                      string
	Repetition, JudgeRepetition    int
	Evaluator, Metric              string
	Value                          float64
}

// ScoreInfo returns one score of a run, or ErrNotFound.
func (db *DB) ScoreInfo(ctx context.Context, runID, scoreID int64) (*ScoreInfo, error) {
	var s ScoreInfo
	err := db.read.QueryRowContext(ctx, `SELECT s.id, s.run_id, s.result_id, r.sample_id, r.condition, r.repetition,
		j.judge_repetition, j.evaluator, s.metric, s.value
		FROM scores s JOIN judgements j ON j.id = s.judgement_id JOIN results r ON r.id = s.result_id
		WHERE s.id = ? AND s.run_id = ?`, scoreID, runID).
		Scan(&s.ID, &s.RunID, &s.ResultID, &s.SampleRow, &s.Condition, &s.Repetition, &s.JudgeRepetition, &s.Evaluator, &s.Metric, &s.Value)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, assay.Errorf(assay.ENOTFOUND, "Run %d has no score %d.", runID, scoreID)
	} else if err != nil {
		return nil, fmt.Errorf("score: %w", err)
	}
	_, s.JudgeRepetition = FromSlot(s.JudgeRepetition)
	return &s, nil
}

// SaveReview stores a verdict, committed on its own. A reviewer's later
// verdict on the same score replaces theirs; the same one twice is one row.
func (db *DB) SaveReview(ctx context.Context, v *Review) error {
	if v.Verdict != VerdictAgree && v.Verdict != VerdictOverride {
		return assay.Errorf(assay.EINVALID, "A verdict is agree or override, not %q.", v.Verdict)
	}
	if v.Reviewer == "" {
		return assay.Errorf(assay.EINVALID, "A verdict needs the reviewer's name.")
	}
	v.At = parseTime(db.nowText())
	// With what the score is of, and the run's next number (migration 0032).
	err := db.write.QueryRowContext(ctx, `INSERT INTO reviews (run_id, score_id, reviewer, verdict, judge_value, value, note, link, created_at,
			evaluator, metric, condition, sample_id, repetition, seq)
		SELECT ?1, s.id, ?3, ?4, ?5, ?6, ?7, ?8, ?9, j.evaluator, s.metric, r.condition, r.sample_id, r.repetition,
			`+nextReviewSeq+`
		FROM scores s JOIN judgements j ON j.id = s.judgement_id JOIN results r ON r.id = s.result_id
		WHERE s.id = ?2 AND s.run_id = ?1
		ON CONFLICT (score_id, reviewer) DO UPDATE SET verdict = excluded.verdict, value = excluded.value,
			note = excluded.note, link = excluded.link, created_at = excluded.created_at, seq = excluded.seq, carried = 0
		RETURNING id, seq`, v.RunID, v.ScoreID, v.Reviewer, v.Verdict, v.JudgeValue, v.Value, v.Note, v.Link,
		v.At.Format(timeFormat)).Scan(&v.ID, &v.Seq)
	if errors.Is(err, sql.ErrNoRows) {
		return assay.Errorf(assay.ENOTFOUND, "Run %d has no score %d.", v.RunID, v.ScoreID)
	} else if err != nil {
		return fmt.Errorf("save verdict: %w", err)
	}
	return db.carryReview(ctx, v.RunID, v.ID)
}

// nextReviewSeq is the run's (?1) next review number: past every review's
// and every withdrawal's.
const nextReviewSeq = `(SELECT max(m) + 1 FROM (SELECT coalesce(max(seq), 0) AS m FROM reviews WHERE run_id = ?1
	UNION ALL SELECT coalesce(max(seq), 0) FROM review_withdrawals WHERE run_id = ?1) AS seqs)`

// ReviewOf is reviewer's verdict on a score of a run; ENOTFOUND when they
// gave none.
func (db *DB) ReviewOf(ctx context.Context, runID, scoreID int64, reviewer string) (*Review, error) {
	list, err := db.reviewsWhere(ctx, `SELECT `+verdictColumns+` FROM reviews WHERE run_id = ? AND score_id = ? AND reviewer = ?`,
		runID, scoreID, reviewer)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, assay.Errorf(assay.ENOTFOUND, "%s has given no verdict on score %d.", reviewer, scoreID)
	}
	return &list[0], nil
}

// WithdrawReview takes reviewer's verdict on a score back, noting the
// withdrawal under the run's next review number; ENOTFOUND when there is
// none.
func (db *DB) WithdrawReview(ctx context.Context, runID, scoreID int64, reviewer string) error {
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("withdraw verdict: %w", err)
	}
	defer tx.Rollback()
	var was Review
	err = tx.QueryRowContext(ctx, `SELECT sample_id, condition, repetition, evaluator, metric FROM reviews
		WHERE run_id = ? AND score_id = ? AND reviewer = ?`, runID, scoreID, reviewer).
		Scan(&was.SampleRow, &was.Condition, &was.Repetition, &was.Evaluator, &was.Metric)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("withdraw verdict: %w", err)
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO review_withdrawals (run_id, score_id, reviewer, seq, withdrawn_at)
		SELECT ?1, ?2, ?3, `+nextReviewSeq+`, ?4 WHERE EXISTS (SELECT 1 FROM reviews WHERE run_id = ?1 AND score_id = ?2 AND reviewer = ?3)`,
		runID, scoreID, reviewer, db.nowText())
	if err != nil {
		return fmt.Errorf("withdraw verdict: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return assay.Errorf(assay.ENOTFOUND, "%s has given no verdict on score %d.", reviewer, scoreID)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM reviews WHERE run_id = ? AND score_id = ? AND reviewer = ?`, runID, scoreID, reviewer); err != nil {
		return fmt.Errorf("withdraw verdict: %w", err)
	}
	was.Reviewer, was.At = reviewer, parseTime(db.nowText())
	if err := withdrawCarried(ctx, tx, runID, was); err != nil {
		return fmt.Errorf("withdraw verdict: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("withdraw verdict: %w", err)
	}
	return nil
}

// Verdicts lists a run's verdicts by score, in the order given, each with
// what its score is of.
func (db *DB) Reviews(ctx context.Context, runID int64) ([]Review, error) {
	return db.reviewsWhere(ctx, `SELECT `+verdictColumns+` FROM reviews WHERE run_id = ? ORDER BY score_id, seq`, runID)
}

// ReviewsSince lists a run's verdicts given, or given again, after the
// one numbered seq (Verdict.Seq), in no order.
func (db *DB) ReviewsSince(ctx context.Context, runID, seq int64) ([]Review, error) {
	return db.reviewsWhere(ctx, `SELECT `+verdictColumns+` FROM reviews WHERE run_id = ? AND seq > ?`, runID, seq)
}

const verdictColumns = `id, run_id, score_id, reviewer, verdict, judge_value, value, note, link, created_at,
	evaluator, metric, condition, sample_id, repetition, seq`

func (db *DB) reviewsWhere(ctx context.Context, query string, args ...any) ([]Review, error) {
	rows, err := db.read.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("verdicts: %w", err)
	}
	defer rows.Close()
	var out []Review
	for rows.Next() {
		var v Review
		var at string
		if err := rows.Scan(&v.ID, &v.RunID, &v.ScoreID, &v.Reviewer, &v.Verdict, &v.JudgeValue, &v.Value, &v.Note, &v.Link, &at,
			&v.Evaluator, &v.Metric, &v.Condition, &v.SampleRow, &v.Repetition, &v.Seq); err != nil {
			return nil, fmt.Errorf("verdicts: %w", err)
		}
		v.At = parseTime(at)
		out = append(out, v)
	}
	return out, rows.Err()
}

// ScoreReviews lists a run's verdicts, oldest first, without what their
// scores are of: what a report needs, which has the scores already.
func (db *DB) ScoreReviews(ctx context.Context, runID int64) ([]Review, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT score_id, reviewer, verdict, judge_value, value, created_at
		FROM reviews WHERE run_id = ?`, runID)
	if err != nil {
		return nil, fmt.Errorf("verdicts: %w", err)
	}
	defer rows.Close()
	var out []Review
	for rows.Next() {
		v := Review{RunID: runID}
		var at string
		if err := rows.Scan(&v.ScoreID, &v.Reviewer, &v.Verdict, &v.JudgeValue, &v.Value, &at); err != nil {
			return nil, fmt.Errorf("verdicts: %w", err)
		}
		v.At = parseTime(at)
		out = append(out, v)
	}
	return out, rows.Err()
}

// ReviewsVersion changes whenever a run's verdicts do: their number and
// the number of the last one given (Verdict.Seq).
func (db *DB) ReviewsVersion(ctx context.Context, runID int64) (n int, last int64, err error) {
	err = db.read.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM reviews WHERE run_id = ?1),
		(SELECT max(m) FROM (SELECT coalesce(max(seq), 0) AS m FROM reviews WHERE run_id = ?1
			UNION ALL SELECT coalesce(max(seq), 0) FROM review_withdrawals WHERE run_id = ?1) AS seqs)`, runID).Scan(&n, &last)
	if err != nil {
		return 0, 0, fmt.Errorf("verdicts version: %w", err)
	}
	return n, last, nil
}

// ReviewLink lets someone without a token review one run.
type ReviewLink struct {
	Token     string // the link's secret: known when it is made or followed
	Key       string // what the database keeps of it (HashSecret), to name it by
	RunID     int64
	Name      string // whom it was made for: their verdicts carry this name
	CreatedAt time.Time
	CreatedBy string
	RevokedAt *time.Time
	Verdicts  int // given through it
}

// CreateReviewLink makes an unguessable link (256 random bits) to review a run.
func (db *DB) CreateReviewLink(ctx context.Context, runID int64, name string) (*ReviewLink, error) {
	if name == "" {
		return nil, assay.Errorf(assay.EINVALID, "Name whom the review link is for: their verdicts carry that name.")
	}
	if len(name) > 100 {
		return nil, assay.Errorf(assay.EINVALID, "A reviewer's name is at most 100 characters.")
	}
	if _, err := db.Run(ctx, runID); err != nil {
		return nil, err
	}
	b := make([]byte, 32)
	rand.Read(b)
	l := &ReviewLink{Token: base64.RawURLEncoding.EncodeToString(b), RunID: runID, Name: name,
		CreatedAt: parseTime(db.nowText()), CreatedBy: Actor(ctx)}
	l.Key = HashSecret(l.Token)
	if _, err := db.write.ExecContext(ctx, `INSERT INTO review_links (token_hash, run_id, name, created_at, created_by) VALUES (?, ?, ?, ?, ?)`,
		l.Key, runID, name, l.CreatedAt.Format(timeFormat), l.CreatedBy); err != nil {
		return nil, fmt.Errorf("create review link: %w", err)
	}
	return l, nil
}

// ReviewLinkByToken returns a live review link, or ErrNotFound.
func (db *DB) ReviewLinkByToken(ctx context.Context, token string) (*ReviewLink, error) {
	l := ReviewLink{Token: token, Key: HashSecret(token)}
	var created string
	err := db.read.QueryRowContext(ctx, `SELECT run_id, name, created_at, created_by FROM review_links
		WHERE token_hash = ? AND revoked_at IS NULL`, l.Key).Scan(&l.RunID, &l.Name, &created, &l.CreatedBy)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("review link: %w", assay.ErrNotFound)
	} else if err != nil {
		return nil, fmt.Errorf("review link: %w", err)
	}
	l.CreatedAt = parseTime(created)
	return &l, nil
}

// ReviewLinks lists a run's review links, newest first, with how many
// verdicts came through each.
func (db *DB) ReviewLinks(ctx context.Context, runID int64) ([]ReviewLink, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT l.token_hash, l.name, l.created_at, l.created_by, l.revoked_at,
		(SELECT count(*) FROM reviews r WHERE r.run_id = l.run_id AND r.link = l.token_hash)
		FROM review_links l WHERE l.run_id = ? ORDER BY l.created_at DESC`, runID)
	if err != nil {
		return nil, fmt.Errorf("review links: %w", err)
	}
	defer rows.Close()
	var out []ReviewLink
	for rows.Next() {
		l := ReviewLink{RunID: runID}
		var created string
		var revoked sql.NullString
		if err := rows.Scan(&l.Key, &l.Name, &created, &l.CreatedBy, &revoked, &l.Verdicts); err != nil {
			return nil, fmt.Errorf("review links: %w", err)
		}
		l.CreatedAt, l.RevokedAt = parseTime(created), parseTimePtr(revoked)
		out = append(out, l)
	}
	return out, rows.Err()
}

// RevokeReviewLink ends a run's review link, named by its token or its
// Key; it then leads nowhere.
func (db *DB) RevokeReviewLink(ctx context.Context, runID int64, tokenOrKey string) error {
	res, err := db.write.ExecContext(ctx, `UPDATE review_links SET revoked_at = ? WHERE token_hash IN (?, ?) AND run_id = ? AND revoked_at IS NULL`,
		db.nowText(), tokenOrKey, HashSecret(tokenOrKey), runID)
	if err != nil {
		return fmt.Errorf("revoke review link: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("review link: %w", assay.ErrNotFound)
	}
	return nil
}
