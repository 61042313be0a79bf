package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"assay"
)

// SigninCodeLife is how long a one-time sign-in code may be used.
const SigninCodeLife = 15 * time.Minute

// SigninCode is who a one-time sign-in code signs in.
type SigninCode struct {
	Name string
	Role Role
}

// CreateSigninCode stores a one-time code that signs a browser in as name
// with role within SigninCodeLife, and returns it; the database keeps its
// hash. Codes past their time are deleted.
func (db *DB) CreateSigninCode(ctx context.Context, name string, role Role) (string, error) {
	code := newSecret("")
	now := db.now()
	if _, err := db.write.ExecContext(ctx, `DELETE FROM signin_codes WHERE expires_at < ?`, now.Format(timeFormat)); err != nil {
		return "", fmt.Errorf("sign-in code: %w", err)
	}
	if _, err := db.write.ExecContext(ctx, `INSERT INTO signin_codes (code_hash, name, role, created_at, expires_at)
		VALUES (?, ?, ?, ?, ?)`, HashSecret(code), name, role, now.Format(timeFormat),
		now.Add(SigninCodeLife).Format(timeFormat)); err != nil {
		return "", fmt.Errorf("sign-in code: %w", err)
	}
	return code, nil
}

// UseSigninCode uses code, once: who it signs in, or ErrNotFound for a
// code unknown, used already or past its time.
func (db *DB) UseSigninCode(ctx context.Context, code string) (*SigninCode, error) {
	var c SigninCode
	now := db.nowText()
	err := db.write.QueryRowContext(ctx, `UPDATE signin_codes SET used_at = ?
		WHERE code_hash = ? AND used_at IS NULL AND expires_at >= ? RETURNING name, role`,
		now, HashSecret(code), now).Scan(&c.Name, &c.Role)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("sign-in code: %w", assay.ErrNotFound)
	} else if err != nil {
		return nil, fmt.Errorf("sign-in code: %w", err)
	}
	return &c, nil
}

// NoteServerAddress records that a server on this database is reached at url.
func (db *DB) NoteServerAddress(ctx context.Context, url string) error {
	if _, err := db.write.ExecContext(ctx, `INSERT INTO server_addresses (url, started_at) VALUES (?, ?)
		ON CONFLICT (url) DO UPDATE SET started_at = excluded.started_at`, url, db.nowText()); err != nil {
		return fmt.Errorf("note the server's address: %w", err)
	}
	return nil
}

// ServerAddress is the address of the server on this database that started
// last; ErrNotFound when none has.
func (db *DB) ServerAddress(ctx context.Context) (string, error) {
	var url string
	err := db.read.QueryRowContext(ctx, `SELECT url FROM server_addresses ORDER BY started_at DESC, url LIMIT 1`).Scan(&url)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("server address: %w", assay.ErrNotFound)
	} else if err != nil {
		return "", fmt.Errorf("server address: %w", err)
	}
	return url, nil
}
