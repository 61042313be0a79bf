package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// IsPostgres reports whether a --db value names a Postgres database
// (postgres://… or postgresql://…) rather than a SQLite file.
func IsPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") || keywordDSN(dsn)
}

// keywordDSN reports whether dsn is libpq's keyword form (host=db
// user=assay password=… dbname=assay), which pgx reads too: key=value
// fields only, one naming the server or the database.
func keywordDSN(dsn string) bool {
	fields := keywordField.FindAllStringSubmatch(dsn, -1)
	if len(fields) == 0 || strings.TrimSpace(keywordField.ReplaceAllString(dsn, "")) != "" {
		return false
	}
	for _, f := range fields {
		switch f[1] {
		case "host", "hostaddr", "dbname", "user", "port", "service":
			return true
		}
	}
	return false
}

// keywordField is one key=value of libpq's keyword form; a value may be
// quoted, with \' and \\ inside.
var keywordField = regexp.MustCompile(`(?:^|\s+)([a-z_]+)\s*=\s*('(?:[^'\\]|\\.)*'|[^\s']*)`)

// keywordPassword is the password field of the keyword form.
var keywordPassword = regexp.MustCompile(`(^|\s)password\s*=\s*('(?:[^'\\]|\\.)*'|[^\s']*)`)

// Redacted is a --db value fit to print: a Postgres DSN without its
// password; a file's path as it is.
func Redacted(dsn string) string {
	if !IsPostgres(dsn) {
		return dsn
	}
	if keywordDSN(dsn) {
		return keywordPassword.ReplaceAllString(dsn, "${1}password=xxxxx")
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return "postgres://(unreadable DSN)"
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	q := u.Query()
	if q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// openPostgres opens the pools of a Postgres database. The store's SQL
// is written with SQLite's placeholders (? and ?N); the connector turns
// them into Postgres's $N, and Go's bools into the 0 and 1 the columns
// hold, so that one text of each statement serves both.
func openPostgres(ctx context.Context, dsn string) (write, read *sql.DB, err error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, nil, fmt.Errorf("open %s: %w", Redacted(dsn), err)
	}
	write = sql.OpenDB(rebinding{stdlib.GetConnector(*cfg)})
	write.SetMaxOpenConns(1)
	read = sql.OpenDB(rebinding{stdlib.GetConnector(*cfg)})
	read.SetMaxOpenConns(8)
	read.SetMaxIdleConns(8)
	if err := write.PingContext(ctx); err != nil {
		write.Close()
		read.Close()
		return nil, nil, fmt.Errorf("open %s: %w", Redacted(dsn), err)
	}
	return write, read, nil
}

type rebinding struct{ driver.Connector }

func (r rebinding) Connect(ctx context.Context) (driver.Conn, error) {
	c, err := r.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &pgConn{c.(*stdlib.Conn)}, nil
}

// pgConn is pgx's database/sql connection taking SQLite's placeholders.
type pgConn struct{ *stdlib.Conn }

func (c *pgConn) Prepare(query string) (driver.Stmt, error) {
	st, err := c.Conn.Prepare(pgText(query))
	return st, connGone(err)
}

func (c *pgConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	st, err := c.Conn.PrepareContext(ctx, pgText(query))
	return st, connGone(err)
}

func (c *pgConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	res, err := c.Conn.ExecContext(ctx, pgText(query), args)
	return res, connGone(err)
}

func (c *pgConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	rows, err := c.Conn.QueryContext(ctx, pgText(query), args)
	return rows, connGone(err)
}

func (c *pgConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	tx, err := c.Conn.BeginTx(ctx, opts)
	return tx, connGone(err)
}

// connGone is driver.ErrBadConn for an error that says the server ended
// the connection (an administrator's command, a shutdown: 57P01–57P03),
// which a pooled connection meets at its next use: the statement did not
// take effect, and database/sql tries it again on another connection
// (inside a transaction the caller sees ErrBadConn, which Unwritable
// knows: the save is tried again whole). Other errors are as they are.
func connGone(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && (pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03") {
		return driver.ErrBadConn
	}
	return err
}

// CheckNamedValue stores a bool as the integer the columns hold.
func (c *pgConn) CheckNamedValue(v *driver.NamedValue) error {
	if b, ok := v.Value.(bool); ok {
		v.Value = int64(0)
		if b {
			v.Value = int64(1)
		}
	}
	return nil
}

// pgText is a statement written for SQLite as Postgres takes it: its
// placeholders rebound, its index hints (INDEXED BY, which Postgres's
// planner has no need of) left out, and SQLite's idioms the store uses
// in Postgres's words (pgIdioms). SQLite's functions the statements call
// alike — min and max of two, holds, sum of a comparison,
// json_array_length — Postgres has from migrations_pg.
func pgText(query string) string {
	if strings.Contains(query, "INDEXED BY") {
		query = indexHint.ReplaceAllString(query, "")
	}
	if strings.Contains(query, "json_each(") || strings.Contains(query, "group_concat(") {
		query = pgIdioms.Replace(query)
	}
	return rebind(query)
}

// pgIdioms are the statements' SQLite idioms and what Postgres says.
var pgIdioms = strings.NewReplacer(
	// A list of ids given as a JSON array.
	"SELECT value FROM json_each(?)", "SELECT value::bigint FROM json_array_elements_text(?::json)",
	// A result's tool calls that failed.
	"(SELECT count(*) FROM json_each(tool_calls) WHERE json_extract(value, '$.is_error'))",
	"(SELECT count(*) FROM json_array_elements(tool_calls::json) e WHERE e->>'is_error' = 'true')",
	// A sample's metadata fields, with SQLite's names of their types.
	"json_each(s.metadata) j", "json_each_sqlite(s.metadata) j",
	// A run's conditions' names, one text.
	"group_concat(name, char(31))", "string_agg(name, chr(31) ORDER BY name)",
)

var indexHint = regexp.MustCompile(`\s+INDEXED BY \w+`)

// rebind turns SQLite's placeholders into Postgres's: ?N into $N, and
// each bare ? into the number after the largest given so far, as SQLite
// numbers them. Text in quotes and comments is left as it is.
func rebind(query string) string {
	if !strings.Contains(query, "?") {
		return query
	}
	var b strings.Builder
	b.Grow(len(query) + 8)
	largest := 0
	for i := 0; i < len(query); i++ {
		ch := query[i]
		switch {
		case ch == '\'' || ch == '"' || ch == '-' && i+1 < len(query) && query[i+1] == '-':
			j := quotedEnd(query, i)
			b.WriteString(query[i:j])
			i = j - 1
		case ch == '?':
			j := i + 1
			for j < len(query) && query[j] >= '0' && query[j] <= '9' {
				j++
			}
			n := largest + 1
			if j > i+1 {
				n, _ = strconv.Atoi(query[i+1 : j])
			}
			largest = max(largest, n)
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			i = j - 1
		default:
			b.WriteByte(ch)
		}
	}
	return b.String()
}

// quotedEnd is where the quoted text or comment starting at i ends: past
// its closing quote, or at the end of its line.
func quotedEnd(query string, i int) int {
	if ch := query[i]; ch == '\'' || ch == '"' {
		j := i + 1
		for j < len(query) && query[j] != ch {
			j++
		}
		return min(j+1, len(query))
	}
	if j := strings.IndexByte(query[i:], '\n'); j >= 0 {
		return i + j
	}
	return len(query)
}

// uniqueViolated reports whether err is a write refused because table's
// column must be unique, in either database's words.
func uniqueViolated(err error, table, column string) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "23505" && pe.TableName == table && strings.Contains(pe.ConstraintName, column)
	}
	return strings.Contains(err.Error(), "UNIQUE constraint failed: "+table+"."+column)
}

// anyUniqueViolated reports whether err is a write refused because a
// value must be unique, whatever the table and column.
func anyUniqueViolated(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "23505"
	}
	return strings.Contains(err.Error(), "UNIQUE constraint failed")
}

// pgUnwritable reports whether err is Postgres refusing a write for a
// reason outside assay that may pass: its disk or memory full (class 53),
// the connection lost (class 08, or the server gone mid-statement), the
// server shutting down or starting (57P01–57P03), a read-only
// transaction (a standby: 25006), or no server to connect to.
func pgUnwritable(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return strings.HasPrefix(pe.Code, "53") || strings.HasPrefix(pe.Code, "08") ||
			pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03" || pe.Code == "25006"
	}
	var ce *pgconn.ConnectError
	return errors.As(err, &ce) || errors.Is(err, driver.ErrBadConn) || errors.Is(err, io.ErrUnexpectedEOF) ||
		strings.Contains(err.Error(), "conn closed")
}

// OpenRaw opens a database at path as database/sql does, without the
// store, for tests to read and change rows behind its back: SQLite's
// driver, or Postgres's taking the store's placeholders.
func OpenRaw(path string) (*sql.DB, error) {
	if IsPostgres(path) {
		cfg, err := pgx.ParseConfig(path)
		if err != nil {
			return nil, err
		}
		return sql.OpenDB(rebinding{stdlib.GetConnector(*cfg)}), nil
	}
	return sql.Open("sqlite", path)
}
