package store

import (
	"context"
	"database/sql"
	"fmt"
)

// A review is a person's score of an answer on a metric, whichever judge
// scored it: a run that judged another's answers again counts the reviews
// of those answers too. They are carried onto its scores of the same
// answer (sample, condition, repetition) and metric, as the person's
// value against the new judge's: agree where the values are equal, an
// override elsewhere. A reviewer's own verdict on the new run's score is
// kept over a carried one.

// CarryReviews copies the reviews of a run's source (the run it judged
// again) onto the run's scores; nothing for a run that made its own
// answers. It returns how many it copied.
func (db *DB) CarryReviews(ctx context.Context, runID int64) (int, error) {
	return db.carry(ctx, `r2.id = ?1`, runID, 0)
}

// carryReview copies one review of run source onto the runs that judged
// its answers again.
func (db *DB) carryReview(ctx context.Context, source, reviewID int64) error {
	_, err := db.carry(ctx, `r2.rejudged_from = ?1`, source, reviewID)
	return err
}

// carry copies reviews onto the runs that where picks (?1 its argument),
// from their sources: the review numbered reviewID, or every one (0).
func (db *DB) carry(ctx context.Context, where string, arg, reviewID int64) (int, error) {
	res, err := db.write.ExecContext(ctx, `INSERT INTO reviews (run_id, score_id, reviewer, verdict, judge_value, value, note, link, created_at,
			evaluator, metric, condition, sample_id, repetition, seq, carried)
		SELECT r2.id, s.id, rv.reviewer, CASE WHEN s.value = rv.value THEN 'agree' ELSE 'override' END, s.value, rv.value, rv.note,
			rv.link, rv.created_at, rv.evaluator, rv.metric, rv.condition, rv.sample_id, rv.repetition,
			(SELECT coalesce(max(seq), 0) + 1 FROM reviews WHERE run_id = r2.id), 1
		FROM runs r2 JOIN reviews rv ON rv.run_id = r2.rejudged_from
		JOIN results res ON res.run_id = r2.id AND res.sample_id = rv.sample_id AND res.condition = rv.condition AND res.repetition = rv.repetition
		JOIN judgements j ON j.result_id = res.id AND j.evaluator = rv.evaluator
		JOIN scores s ON s.judgement_id = j.id AND s.metric = rv.metric
		WHERE `+where+` AND (?2 = 0 OR rv.id = ?2)
		ON CONFLICT (score_id, reviewer) DO UPDATE SET verdict = excluded.verdict, judge_value = excluded.judge_value,
			value = excluded.value, note = excluded.note, created_at = excluded.created_at, seq = excluded.seq
			WHERE reviews.carried = 1`, arg, reviewID)
	if err != nil {
		return 0, fmt.Errorf("carry reviews: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// JudgedAlike lists the runs that judged the same answers as run id: the
// run whose answers they are and every run that judged them again, in id
// order.
func (db *DB) JudgedAlike(ctx context.Context, id int64) ([]int64, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT r.id FROM runs r, runs me WHERE me.id = ?1
		AND (r.id = coalesce(me.rejudged_from, me.id) OR r.rejudged_from = coalesce(me.rejudged_from, me.id))
		AND r.status NOT IN `+HiddenRuns+` ORDER BY r.id`, id)
	if err != nil {
		return nil, fmt.Errorf("runs judging the same answers: %w", err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var r int64
		if err := rows.Scan(&r); err != nil {
			return nil, fmt.Errorf("runs judging the same answers: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// JudgeCost is what a run's judge calls cost, and how many judgements
// were made without error.
func (db *DB) JudgeCost(ctx context.Context, runID int64) (usd float64, judgements int, err error) {
	err = db.read.QueryRowContext(ctx, `SELECT coalesce(sum(cost_usd), 0), count(*) FROM judgements WHERE run_id = ? AND error = ''`, runID).
		Scan(&usd, &judgements)
	if err != nil {
		return 0, 0, fmt.Errorf("judge cost: %w", err)
	}
	return usd, judgements, nil
}

// withdrawCarried takes back the copies of a review withdrawn on run
// source from the runs that judged its answers again, each withdrawal
// numbered as the run's next review.
func withdrawCarried(ctx context.Context, tx *sql.Tx, source int64, v Review) error {
	rows, err := tx.QueryContext(ctx, `SELECT rv.run_id, rv.score_id FROM reviews rv JOIN runs r ON r.id = rv.run_id
		WHERE r.rejudged_from = ? AND rv.carried = 1 AND rv.reviewer = ? AND rv.sample_id = ? AND rv.condition = ?
			AND rv.repetition = ? AND rv.evaluator = ? AND rv.metric = ?`,
		source, v.Reviewer, v.SampleRow, v.Condition, v.Repetition, v.Evaluator, v.Metric)
	if err != nil {
		return err
	}
	var copies [][2]int64
	for rows.Next() {
		var c [2]int64
		if err := rows.Scan(&c[0], &c[1]); err != nil {
			rows.Close()
			return err
		}
		copies = append(copies, c)
	}
	rows.Close()
	for _, c := range copies {
		if _, err := tx.ExecContext(ctx, `INSERT INTO review_withdrawals (run_id, score_id, reviewer, seq, withdrawn_at)
			VALUES (?1, ?2, ?3, `+nextReviewSeq+`, ?4)`, c[0], c[1], v.Reviewer, v.At.Format(timeFormat)); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM reviews WHERE run_id = ? AND score_id = ? AND reviewer = ?`, c[0], c[1], v.Reviewer); err != nil {
			return err
		}
	}
	return nil
}
