package store

import (
	"context"
	"crypto/rand"
	"fmt"
)

// ServerKey returns the database's 256-bit secret of that name, made on first use.
func (db *DB) ServerKey(ctx context.Context, name string) ([]byte, error) {
	fresh := make([]byte, 32)
	if _, err := rand.Read(fresh); err != nil {
		return nil, fmt.Errorf("server key %s: %w", name, err)
	}
	if _, err := db.write.ExecContext(ctx, `INSERT INTO server_keys (name, value, created_at) VALUES (?, ?, ?)
		ON CONFLICT (name) DO NOTHING`, name, fresh, db.nowText()); err != nil {
		return nil, fmt.Errorf("server key %s: %w", name, err)
	}
	var key []byte
	if err := db.write.QueryRowContext(ctx, `SELECT value FROM server_keys WHERE name = ?`, name).Scan(&key); err != nil {
		return nil, fmt.Errorf("server key %s: %w", name, err)
	}
	return key, nil
}
