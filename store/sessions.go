package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"assay"
)

// Session is a signed-in browser: who, with which role, since when.
type Session struct {
	TokenID   *int64 // nil for the server's own --token
	Name      string
	Role      Role
	CreatedAt time.Time
	LastSeen  time.Time
}

// SessionLimits end sessions: after Idle without a request, and Max after
// sign-in whatever happens.
type SessionLimits struct {
	Idle, Max time.Duration
}

// CreateSession signs a browser in and returns the session's id, which only
// the browser keeps: the database holds its hash. tokenHash is the hash of
// the token signed in with.
func (db *DB) CreateSession(ctx context.Context, s *Session, tokenHash string) (string, error) {
	id := newSecret("")
	now := db.nowText()
	s.CreatedAt, s.LastSeen = parseTime(now), parseTime(now)
	if _, err := db.write.ExecContext(ctx, `INSERT INTO sessions (id_hash, token_id, token_hash, name, role, created_at, last_seen)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, HashSecret(id), s.TokenID, tokenHash, s.Name, s.Role, now, now); err != nil {
		return "", fmt.Errorf("create session: %w", err)
	}
	return id, nil
}

// SessionByID returns the live session of that id. ownHash is the hash of
// the server's --token ("" for none): a session signed in with another
// --token has ended. A session past its limits is deleted and not found;
// a live one's last request is noted (at most once a minute, or every
// quarter of the idle limit when that is shorter).
func (db *DB) SessionByID(ctx context.Context, id, ownHash string, lim SessionLimits) (*Session, error) {
	var s Session
	var tokenID sql.NullInt64
	var tokenHash, created, seen string
	err := db.read.QueryRowContext(ctx, `SELECT s.token_id, s.token_hash, s.name, s.role, s.created_at, s.last_seen
		FROM sessions s LEFT JOIN tokens t ON t.id = s.token_id
		WHERE s.id_hash = ? AND (s.token_id IS NULL OR t.revoked_at IS NULL)`, HashSecret(id)).
		Scan(&tokenID, &tokenHash, &s.Name, &s.Role, &created, &seen)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("session: %w", assay.ErrNotFound)
	} else if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	if tokenID.Valid {
		s.TokenID = &tokenID.Int64
	}
	s.CreatedAt, s.LastSeen = parseTime(created), parseTime(seen)
	now := db.now()
	if (!tokenID.Valid && (ownHash == "" || tokenHash != ownHash)) || now.Sub(s.LastSeen) > lim.Idle || now.Sub(s.CreatedAt) > lim.Max {
		db.EndSession(ctx, id)
		return nil, fmt.Errorf("session ended: %w", assay.ErrNotFound)
	}
	// Noted at most once a minute, or more often when sessions end sooner.
	if now.Sub(s.LastSeen) > min(time.Minute, lim.Idle/4) {
		db.write.ExecContext(ctx, `UPDATE sessions SET last_seen = ? WHERE id_hash = ?`, now.Format(timeFormat), HashSecret(id))
		s.LastSeen = now
	}
	return &s, nil
}

// EndSession signs a browser out.
func (db *DB) EndSession(ctx context.Context, id string) error {
	if _, err := db.write.ExecContext(ctx, `DELETE FROM sessions WHERE id_hash = ?`, HashSecret(id)); err != nil {
		return fmt.Errorf("end session: %w", err)
	}
	return nil
}

// PruneSessions deletes the sessions past their limits.
func (db *DB) PruneSessions(ctx context.Context, lim SessionLimits) error {
	now := db.now()
	_, err := db.write.ExecContext(ctx, `DELETE FROM sessions WHERE last_seen < ? OR created_at < ?`,
		now.Add(-lim.Idle).Format(timeFormat), now.Add(-lim.Max).Format(timeFormat))
	if err != nil {
		return fmt.Errorf("prune sessions: %w", err)
	}
	return nil
}
