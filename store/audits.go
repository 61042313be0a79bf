package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// SaveAudit keeps what a judge audit of a run found (its result as JSON),
// with its calls and cost, apart from the run's own.
func (db *DB) SaveAudit(ctx context.Context, runID int64, calls int, costUSD float64, result []byte) error {
	_, err := db.write.ExecContext(ctx, `INSERT INTO audits (run_id, created_at, calls, cost_usd, result) VALUES (?, ?, ?, ?, ?)`,
		runID, db.nowText(), calls, costUSD, string(result))
	if err != nil {
		return fmt.Errorf("run %d: save its audit: %w", runID, err)
	}
	return nil
}

// LatestAudit is the result of a run's latest judge audit, as JSON; nil
// when it has none.
func (db *DB) LatestAudit(ctx context.Context, runID int64) ([]byte, error) {
	var result string
	err := db.read.QueryRowContext(ctx, `SELECT result FROM audits WHERE run_id = ? ORDER BY id DESC LIMIT 1`, runID).Scan(&result)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("run %d: its audit: %w", runID, err)
	}
	return []byte(result), nil
}
