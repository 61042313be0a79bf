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

// Share is a read-only link to one run's report.
type Share struct {
	Token     string // the link's secret: known only when it is made
	Key       string // what the database keeps of it (HashSecret), to name it by
	RunID     int64
	CreatedAt time.Time
	CreatedBy string
	RevokedAt *time.Time
}

// CreateShare makes an unguessable token (256 random bits) for a run.
func (db *DB) CreateShare(ctx context.Context, runID int64) (*Share, error) {
	if _, err := db.Run(ctx, runID); err != nil {
		return nil, err
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return nil, fmt.Errorf("share token: %w", err)
	}
	s := &Share{Token: base64.RawURLEncoding.EncodeToString(b), RunID: runID, CreatedAt: parseTime(db.nowText()), CreatedBy: Actor(ctx)}
	s.Key = HashSecret(s.Token)
	if _, err := db.write.ExecContext(ctx, `INSERT INTO share_links (token_hash, run_id, created_at, created_by) VALUES (?, ?, ?, ?)`,
		s.Key, runID, s.CreatedAt.Format(timeFormat), s.CreatedBy); err != nil {
		return nil, fmt.Errorf("create share: %w", err)
	}
	return s, nil
}

// SharedRun returns the run a live (not revoked) token shares, or ErrNotFound.
func (db *DB) SharedRun(ctx context.Context, token string) (int64, error) {
	var id int64
	err := db.read.QueryRowContext(ctx, `SELECT run_id FROM share_links WHERE token_hash = ? AND revoked_at IS NULL`, HashSecret(token)).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("share: %w", assay.ErrNotFound)
	} else if err != nil {
		return 0, fmt.Errorf("share: %w", err)
	}
	return id, nil
}

// Shares lists a run's links, newest first, revoked ones included: by
// their Key, as their tokens are not kept.
func (db *DB) Shares(ctx context.Context, runID int64) ([]Share, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT token_hash, run_id, created_at, created_by, revoked_at FROM share_links
		WHERE run_id = ? ORDER BY created_at DESC`, runID)
	if err != nil {
		return nil, fmt.Errorf("shares: %w", err)
	}
	defer rows.Close()
	var out []Share
	for rows.Next() {
		var s Share
		var created string
		var revoked sql.NullString
		if err := rows.Scan(&s.Key, &s.RunID, &created, &s.CreatedBy, &revoked); err != nil {
			return nil, fmt.Errorf("shares: %w", err)
		}
		s.CreatedAt, s.RevokedAt = parseTime(created), parseTimePtr(revoked)
		out = append(out, s)
	}
	return out, rows.Err()
}

// RevokeShare ends a link of a run, named by its token or its Key; it then
// leads nowhere.
func (db *DB) RevokeShare(ctx context.Context, runID int64, tokenOrKey string) error {
	res, err := db.write.ExecContext(ctx, `UPDATE share_links SET revoked_at = ? WHERE token_hash IN (?, ?) AND run_id = ? AND revoked_at IS NULL`,
		db.nowText(), tokenOrKey, HashSecret(tokenOrKey), runID)
	if err != nil {
		return fmt.Errorf("revoke share: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("share: %w", assay.ErrNotFound)
	}
	return nil
}
