package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

//go:embed migrations/*.sql migrations_pg/*.sql
var migrations embed.FS

// DB is assay's database, a SQLite file or a Postgres database: one
// connection for writes beside a pool for reads, so that concurrent
// workers never meet SQLITE_BUSY.
type DB struct {
	Path     string // the SQLite file, or the Postgres DSN
	pg       bool   // a Postgres database
	write    *sql.DB
	read     *sql.DB // on Postgres it also takes the writes made aside (aside)
	now      func() time.Time
	clockSet bool        // now was set by a test
	trigrams bool        // a Postgres database with a trigram index of the responses
	stmts    statements  // prepared on write
	commits  *committer  // of results and pending work
	keeps    keptParts   // pending work queued for the committer
	tallies  Tallies     // what is derived from the record, kept in step with it; nil for none
	bg       *Background // runs being deleted that a stopped process left
}

// Open opens (creating if needed) the database file at path, or the
// Postgres database a postgres:// DSN names, and applies migrations.
// The database keeps the record alone: a database that results are
// written to is opened with its tallies (OpenWith, tally.Open).
func Open(ctx context.Context, path string) (*DB, error) { return open(ctx, path, "", nil) }

// open is OpenWith applying the migrations numbered up to upTo ("0021"; "" for all).
func open(ctx context.Context, path, upTo string, tallies Tallies) (*DB, error) {
	var write, read *sql.DB
	var err error
	if IsPostgres(path) {
		write, read, err = openPostgres(ctx, path)
	} else {
		write, read, err = openSQLite(ctx, path)
	}
	if err != nil {
		return nil, err
	}
	db := &DB{Path: path, pg: IsPostgres(path), write: write, read: read, now: func() time.Time { return time.Now().UTC() }, bg: NewBackground()}
	if err := db.migrate(ctx, upTo); err != nil {
		db.Close()
		return nil, err
	}
	if db.pg {
		if err := db.read.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_indexes
			WHERE schemaname = current_schema() AND indexname = 'results_response_trigrams')`).Scan(&db.trigrams); err != nil {
			db.Close()
			return nil, fmt.Errorf("open %s: %w", Redacted(path), err)
		}
	}
	if tallies != nil {
		if err := tallies.Open(ctx, db); err != nil {
			db.Close()
			return nil, err
		}
		db.tallies = tallies
	}
	if upTo == "" { // an older schema (tests of migrations) is written to by hand
		if err := db.prepareWrites(ctx); err != nil {
			db.Close()
			return nil, err
		}
	}
	db.startCommitter()
	if upTo == "" {
		if err := db.resumeDeleting(ctx); err != nil {
			db.Close()
			return nil, err
		}
	}
	return db, nil
}

func openSQLite(ctx context.Context, path string) (write, read *sql.DB, err error) {
	if err := create(ctx, path); err != nil {
		return nil, nil, err
	}
	write, err = sql.Open("sqlite", dsnFor(path, "immediate"))
	if err != nil {
		return nil, nil, fmt.Errorf("open %s: %w", path, err)
	}
	write.SetMaxOpenConns(1)
	// Reads begin deferred: a read transaction takes no write lock, and sees
	// one snapshot of the database however many queries it makes.
	read, err = sql.Open("sqlite", dsnFor(path, "deferred")+"&_pragma=query_only(1)")
	if err != nil {
		write.Close()
		return nil, nil, fmt.Errorf("open %s: %w", path, err)
	}
	// Every read connection stays open between reads: with database/sql's
	// two idle ones, the parts a first report or search reads at once each
	// opened a connection again, read its schema and filled its page cache
	// anew (a tenth of the CPU of a 150,000-result report's first request).
	read.SetMaxOpenConns(8)
	read.SetMaxIdleConns(8)
	return write, read, nil
}

// PageSize is the page size of a database file assay creates, and of a
// backup's copy (VACUUM INTO writes it with the size asked for). SQLite
// reads a page with a system call of its own, so a search reading every
// response is faster with larger pages, and each commit writes the pages
// it touched whole, so storing a result is slower: 8,192 bytes is where
// the search gains most and the engine's wall time does not move
// (docs/performance.md). A file's page size is fixed when it is made.
const PageSize = 8192

// FilePageSize is the page size of the database's file: PageSize, or
// SQLite's 4,096 in a file made before assay set it. A Postgres
// database has no file of assay's: PageSize.
func (db *DB) FilePageSize(ctx context.Context) (int, error) {
	if db.pg {
		return PageSize, nil
	}
	var n int
	if err := db.read.QueryRowContext(ctx, `PRAGMA page_size`).Scan(&n); err != nil {
		return 0, fmt.Errorf("page size: %w", err)
	}
	return n, nil
}

// create makes the database file at path with PageSize, unless it exists
// and has a header. The connection string cannot: the driver runs its
// PRAGMAs in the order of their names, journal_mode (which writes the
// file) before page_size. Another process opening the same new file (a
// server and a run started together) may be making it at the same time:
// SQLite then refuses the change of journal mode at once, without waiting
// for the lock, and the file's first pages are still in its WAL; create
// tries again until the other is done (the pragmas then change nothing).
func create(ctx context.Context, path string) error {
	for tries := 1; ; tries++ {
		err := createOnce(ctx, path)
		var e interface{ Code() int }
		if err == nil || !errors.As(err, &e) || e.Code()&0xff != sqliteBusy || tries == 200 {
			return err
		}
		select {
		case <-time.After(10 * time.Millisecond):
		case <-ctx.Done():
			return err
		}
	}
}

// sqliteBusy is SQLite's primary result code SQLITE_BUSY.
const sqliteBusy = 5

func createOnce(ctx context.Context, path string) error {
	if info, err := os.Stat(path); err == nil && info.Size() > 0 || err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil // an existing file, or one Open reports on
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	defer conn.Close()
	for _, pragma := range []string{fmt.Sprintf("PRAGMA page_size = %d", PageSize), "PRAGMA journal_mode = WAL"} {
		if _, err := conn.ExecContext(ctx, pragma); err != nil {
			return fmt.Errorf("create %s: %w", path, err)
		}
	}
	return nil
}

// dsnFor puts the PRAGMAs in the connection string, so every pooled
// connection gets them; txlock is how its transactions begin.
func dsnFor(path, txlock string) string {
	q := url.Values{}
	for _, p := range []string{"busy_timeout(10000)", "journal_mode(WAL)", "foreign_keys(ON)", "synchronous(NORMAL)", "temp_store(MEMORY)"} {
		q.Add("_pragma", p)
	}
	q.Set("_txlock", txlock)
	return "file:" + path + "?" + q.Encode()
}

// Close closes both pools.
func (db *DB) Close() error {
	db.bg.Close()
	if db.tallies != nil {
		db.tallies.Close()
	}
	db.stopCommitter()
	db.closeStatements()
	rerr := db.read.Close()
	if err := db.write.Close(); err != nil {
		return err
	}
	return rerr
}

func (db *DB) migrate(ctx context.Context, upTo string) error {
	// In a transaction begun IMMEDIATE, which waits for another process's
	// write lock: alone, the statement read the schema first and, when
	// another process opening the same new file wrote meanwhile, failed
	// at once with "database is locked" (its snapshot stale, waiting could
	// not help).
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	defer tx.Rollback()
	if err := db.lockMigrations(ctx, tx); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version TEXT PRIMARY KEY, applied_at TEXT NOT NULL)`); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	names, err := fs.Glob(migrations, db.migrationsDir()+"/*.sql")
	if err != nil {
		return fmt.Errorf("list migrations: %w", err)
	}
	sort.Strings(names)
	if err := db.refuseNewer(ctx, names); err != nil {
		return err
	}
	for _, name := range names {
		if upTo != "" && migrationVersion(name)[:len(upTo)] > upTo {
			break
		}
		if err := db.applyMigration(ctx, name); err != nil {
			return err
		}
	}
	return nil
}

// migrationVersion is the version a migration file records: its name
// without folder or extension ("0023_response_search").
func migrationVersion(name string) string {
	return strings.TrimSuffix(path.Base(name), ".sql")
}

// migrationsDir is the folder of the database's dialect: a Postgres
// database begins at the schema SQLite's migrations had reached
// (migrations_pg/0042_audits.sql), and each later one is in both.
func (db *DB) migrationsDir() string {
	if db.pg {
		return "migrations_pg"
	}
	return "migrations"
}

// lockMigrations makes another server migrating the same Postgres
// database at once wait for this transaction; SQLite's write transaction
// already holds the file's lock.
func (db *DB) lockMigrations(ctx context.Context, tx *sql.Tx) error {
	if !db.pg {
		return nil
	}
	_, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(7349512)`)
	return err
}

// ErrNewerDatabase is returned by Open for a database a newer assay has
// migrated: this one would misread what it stores.
var ErrNewerDatabase = errors.New("written by a newer assay")

// refuseNewer returns ErrNewerDatabase when the database has a migration
// this assay does not know, naming it.
func (db *DB) refuseNewer(ctx context.Context, names []string) error {
	known := map[string]bool{}
	for _, name := range names {
		known[migrationVersion(name)] = true
	}
	rows, err := db.write.QueryContext(ctx, `SELECT version FROM schema_migrations ORDER BY version`)
	if err != nil {
		return fmt.Errorf("read schema_migrations: %w", err)
	}
	defer rows.Close()
	var unknown []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return fmt.Errorf("read schema_migrations: %w", err)
		}
		if !known[v] {
			unknown = append(unknown, v)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read schema_migrations: %w", err)
	}
	if len(unknown) > 0 {
		last := migrationVersion(names[len(names)-1])
		return fmt.Errorf("%s: %w (it has migration %s, this assay knows up to %s): open it with that assay or a later one, or restore a backup made before",
			Redacted(db.Path), ErrNewerDatabase, strings.Join(unknown, ", "), last)
	}
	return nil
}

// applyMigration runs one migration file in its own transaction, once. A
// file that begins with foreignKeysOff runs with foreign keys off (they
// cannot be turned off inside a transaction): it copies a table that other
// tables refer to, and dropping the old one must delete nothing. The keys
// are checked before it commits, then turned on again.
func (db *DB) applyMigration(ctx context.Context, name string) error {
	version := migrationVersion(name)
	body, err := migrations.ReadFile(name)
	if err != nil {
		return fmt.Errorf("migration %s: %w", version, err)
	}
	conn, err := db.write.Conn(ctx)
	if err != nil {
		return fmt.Errorf("migration %s: %w", version, err)
	}
	defer conn.Close()
	keysOff := strings.HasPrefix(string(body), foreignKeysOff)
	if keysOff {
		if _, err := conn.ExecContext(ctx, `PRAGMA foreign_keys = OFF`); err != nil {
			return fmt.Errorf("migration %s: %w", version, err)
		}
		defer conn.ExecContext(context.WithoutCancel(ctx), `PRAGMA foreign_keys = ON`)
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migration %s: %w", version, err)
	}
	defer tx.Rollback()
	if err := db.lockMigrations(ctx, tx); err != nil {
		return fmt.Errorf("migration %s: %w", version, err)
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations WHERE version = ?`, version).Scan(&n); err != nil {
		return fmt.Errorf("migration %s: %w", version, err)
	}
	if n > 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, string(body)); err != nil {
		return fmt.Errorf("migration %s: %w", version, err)
	}
	if keysOff {
		var broken int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM pragma_foreign_key_check`).Scan(&broken); err != nil {
			return fmt.Errorf("migration %s: %w", version, err)
		} else if broken > 0 {
			return fmt.Errorf("migration %s: %d rows would refer to nothing", version, broken)
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)`,
		version, db.now().Format(time.RFC3339Nano)); err != nil {
		return fmt.Errorf("migration %s: %w", version, err)
	}
	return tx.Commit()
}

// foreignKeysOff opens a migration that runs with foreign keys off.
const foreignKeysOff = "-- assay: foreign keys off"

// BeginRead opens a read-only transaction on the read pool: the queries
// made in it see one snapshot.
func (db *DB) BeginRead(ctx context.Context) (*sql.Tx, error) {
	tx, err := db.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("begin read: %w", err)
	}
	return tx, nil
}

// Querier is a transaction or a pool.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// aside is where the executors of a shared run write their rows and
// claims: on Postgres a connection of the pool, so that they do not wait
// for the committer's transaction on the write connection (a claim that
// did held its run's workers back, and a row renewed late, the others'
// shares); SQLite's one writer, the write connection.
func (db *DB) aside() *sql.DB {
	if db.pg {
		return db.read
	}
	return db.write
}

// BeginWrite opens a transaction on the single write connection.
func (db *DB) BeginWrite(ctx context.Context) (*sql.Tx, error) {
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("begin: %w", err)
	}
	return tx, nil
}

const timeFormat = time.RFC3339Nano

func (db *DB) nowText() string { return db.now().Format(timeFormat) }

// SetClock makes the database read the time from now: for tests of what
// expires, which cannot wait days.
func (db *DB) SetClock(now func() time.Time) { db.now, db.clockSet = now, true }

// sharedNow is the time by which servers sharing a Postgres database
// judge each other's leases: the database's clock, not each node's,
// which may differ. A SQLite file's processes share one host's clock;
// a clock set by a test is kept.
func (db *DB) sharedNow(ctx context.Context, q Querier) (time.Time, error) {
	if !db.pg || db.clockSet {
		return db.now(), nil
	}
	var micros int64
	if err := q.QueryRowContext(ctx, `SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint`).Scan(&micros); err != nil {
		return time.Time{}, fmt.Errorf("the database's clock: %w", err)
	}
	return time.UnixMicro(micros).UTC(), nil
}

func parseTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}

func parseTimePtr(s sql.NullString) *time.Time {
	if !s.Valid || s.String == "" {
		return nil
	}
	t := parseTime(s.String)
	return &t
}
