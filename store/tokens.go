package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"database/sql/driver"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"modernc.org/sqlite"

	"assay"
)

// Role is what a signed-in person may do.
type Role string

// The roles, from most to least allowed.
const (
	RoleOwner    Role = "owner"    // everything
	RoleReviewer Role = "reviewer" // read runs, record review verdicts
	RoleViewer   Role = "viewer"   // read only
)

// Roles lists every role, most allowed first.
var Roles = []Role{RoleOwner, RoleReviewer, RoleViewer}

func (r Role) rank() int {
	switch r {
	case RoleOwner:
		return 3
	case RoleReviewer:
		return 2
	case RoleViewer:
		return 1
	}
	return 0
}

// Valid reports whether r is a known role.
func (r Role) Valid() bool { return r.rank() > 0 }

// Allows reports whether r may do what needs at least min.
func (r Role) Allows(min Role) bool { return r.rank() >= min.rank() }

// Token is a named access token; its secret is never stored.
type Token struct {
	ID        int64
	Name      string
	Role      Role
	CreatedAt time.Time
	CreatedBy string
	LastUsed  *time.Time
	RevokedAt *time.Time
}

// tokenName is what a token's name may be: a person or a machine.
var tokenName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$`)

// HashSecret is the stored form of a token's secret, a session id, or a
// share or review link's token.
func HashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// The migrations hash secrets kept in clear by earlier versions with
// assay_sha256_hex(text), which is HashSecret.
func init() {
	err := sqlite.RegisterDeterministicScalarFunction("assay_sha256_hex", 1, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		switch v := args[0].(type) {
		case string:
			return HashSecret(v), nil
		case []byte:
			return HashSecret(string(v)), nil
		case nil:
			return nil, nil
		}
		return nil, fmt.Errorf("assay_sha256_hex: %T is not text", args[0])
	})
	if err != nil {
		panic(err)
	}
}

// newSecret is 256 random bits, URL-safe, with a prefix that says what it is.
func newSecret(prefix string) string {
	b := make([]byte, 32)
	rand.Read(b)
	return prefix + base64.RawURLEncoding.EncodeToString(b)
}

// CreateToken stores a new token for name with role and returns its secret,
// which exists nowhere else: it cannot be shown again. The first active
// token is an owner's, so that once tokens are asked for someone may
// manage them: role "" makes it one (and a viewer's after it), another
// role is refused.
func (db *DB) CreateToken(ctx context.Context, name string, role Role) (string, *Token, error) {
	name = strings.TrimSpace(name)
	switch {
	case !tokenName.MatchString(name):
		return "", nil, assay.Errorf(assay.EINVALID, "A token's name is 1 to 64 letters, digits, '.', '_', '@' or '-', starting with a letter or digit; %q is not.", name)
	case role != "" && !role.Valid():
		return "", nil, assay.Errorf(assay.EINVALID, "Unknown role %q: want owner, reviewer or viewer.", role)
	}
	secret := newSecret("asy_")
	t := &Token{Name: name, Role: role, CreatedAt: parseTime(db.nowText()), CreatedBy: Actor(ctx)}
	// The role is settled by the statement that writes the row.
	err := db.write.QueryRowContext(ctx, `INSERT INTO tokens (name, role, hash, created_at, created_by)
		SELECT ?, CASE WHEN EXISTS (SELECT 1 FROM tokens WHERE revoked_at IS NULL) THEN coalesce(nullif(?, ''), 'viewer') ELSE 'owner' END, ?, ?, ?
		WHERE ? IN ('', 'owner') OR EXISTS (SELECT 1 FROM tokens WHERE revoked_at IS NULL)
		RETURNING id, role`,
		t.Name, t.Role, HashSecret(secret), t.CreatedAt.Format(timeFormat), t.CreatedBy, t.Role).Scan(&t.ID, &t.Role)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", nil, assay.Errorf(assay.EINVALID, "The first token is an owner's, so that someone can manage the others: make %s an owner, or make an owner's token first.", name)
	case err != nil && anyUniqueViolated(err):
		return "", nil, assay.Errorf(assay.ECONFLICT, "%s already has a token: revoke it first, or choose another name.", name)
	case err != nil:
		return "", nil, fmt.Errorf("create token: %w", err)
	}
	return secret, t, nil
}

const tokenColumns = `id, name, role, created_at, created_by, last_used, revoked_at`

func scanToken(row interface{ Scan(...any) error }) (*Token, error) {
	var t Token
	var created string
	var used, revoked sql.NullString
	if err := row.Scan(&t.ID, &t.Name, &t.Role, &created, &t.CreatedBy, &used, &revoked); errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("token: %w", assay.ErrNotFound)
	} else if err != nil {
		return nil, fmt.Errorf("scan token: %w", err)
	}
	t.CreatedAt, t.LastUsed, t.RevokedAt = parseTime(created), parseTimePtr(used), parseTimePtr(revoked)
	return &t, nil
}

// TokenBySecret returns the active token whose secret this is, and notes
// its use (at most once a minute).
func (db *DB) TokenBySecret(ctx context.Context, secret string) (*Token, error) {
	t, err := scanToken(db.read.QueryRowContext(ctx, `SELECT `+tokenColumns+` FROM tokens WHERE hash = ? AND revoked_at IS NULL`,
		HashSecret(secret)))
	if err != nil {
		return nil, err
	}
	now := db.now()
	if t.LastUsed == nil || now.Sub(*t.LastUsed) > time.Minute {
		db.write.ExecContext(ctx, `UPDATE tokens SET last_used = ? WHERE id = ?`, now.Format(timeFormat), t.ID)
	}
	return t, nil
}

// Tokens lists every token, revoked ones too, by name.
func (db *DB) Tokens(ctx context.Context) ([]Token, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+tokenColumns+` FROM tokens ORDER BY revoked_at IS NOT NULL, name, id`)
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	defer rows.Close()
	var out []Token
	for rows.Next() {
		t, err := scanToken(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *t)
	}
	return out, rows.Err()
}

// HasTokens reports whether any token is active: a server with one asks
// every visitor for a token.
func (db *DB) HasTokens(ctx context.Context) (bool, error) {
	var n int
	if err := db.read.QueryRowContext(ctx, `SELECT count(*) FROM tokens WHERE revoked_at IS NULL`).Scan(&n); err != nil {
		return false, fmt.Errorf("count tokens: %w", err)
	}
	return n > 0, nil
}

// RevokeToken revokes name's active token and ends its sessions.
func (db *DB) RevokeToken(ctx context.Context, name string) error {
	tx, err := db.BeginWrite(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var id int64
	err = tx.QueryRowContext(ctx, `SELECT id FROM tokens WHERE name = ? AND revoked_at IS NULL`, name).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return assay.Errorf(assay.ENOTFOUND, "No active token is named %q.", name)
	} else if err != nil {
		return fmt.Errorf("revoke token: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE tokens SET revoked_at = ? WHERE id = ?`, db.nowText(), id); err != nil {
		return fmt.Errorf("revoke token: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE token_id = ?`, id); err != nil {
		return fmt.Errorf("revoke token: %w", err)
	}
	return tx.Commit()
}

// actorKey keys the signed-in name in a context.
type actorKey struct{}

// WithActor returns a context under which what is stored names name as its maker.
func WithActor(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, actorKey{}, name)
}

// Actor is the name WithActor put in ctx, or "".
func Actor(ctx context.Context) string {
	s, _ := ctx.Value(actorKey{}).(string)
	return s
}
