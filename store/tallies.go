package store

import (
	"context"
	"database/sql"
	"sync"
)

// Tallies keeps what is derived from the record in step with it: the
// read model's tables (package readmodel/tally), which live in the same
// database. The store calls it inside the transactions that change what
// it derives from, so that a result and its effects commit together; it
// reads and writes nothing of the record itself but through these calls.
// A database opened without Tallies (Open) keeps the record alone.
type Tallies interface {
	// Statements are the statements Begin's Stored runs for each result,
	// prepared on the write connection when the database opens.
	Statements() []string
	// Open is called once the database is migrated, before anything is
	// written: it computes what is missing and starts its background work.
	Open(ctx context.Context, db *DB) error
	// Begin starts what one write transaction's results add.
	Begin() TxTallies
	// Rebuild replaces what was derived from a run's record by what the
	// record gives now, in tx.
	Rebuild(ctx context.Context, tx *sql.Tx, runID int64) error
	// Removed takes results just deleted from a run (its failed tasks,
	// cleared to be done again) out of what was derived from them, in the
	// transaction that deleted them.
	Removed(ctx context.Context, tx *sql.Tx, runID int64, gone []Result) error
	// Deleting is told, in the transaction that marks a run deleting, how
	// many results it has; Deleted, once they are gone.
	Deleting(ctx context.Context, tx *sql.Tx, results int) error
	Deleted(ctx context.Context, results int) error
	// Close stops its background work and waits for it.
	Close()
}

// TxTallies is what one write transaction's results add to the tallies.
// The committer runs several writes in a transaction, each apart under a
// savepoint when one of them fails: Kept and Dropped say whether the
// results Stored since the last of either were kept or rolled back.
type TxTallies interface {
	Stored(ctx context.Context, tx Tx, r *Result) error
	Kept()
	Dropped()
	// Flush writes what is still held, just before the transaction commits.
	Flush(ctx context.Context, tx Tx) error
}

// OpenWith opens the database as Open does, with t kept in step with it.
func OpenWith(ctx context.Context, path string, t Tallies) (*DB, error) {
	return open(ctx, path, "", t)
}

// Tallies returns what the database keeps in step with its record; nil
// when it was opened without.
func (db *DB) Tallies() Tallies { return db.tallies }

// Read is the pool of read connections.
func (db *DB) Read() *sql.DB { return db.read }

// Postgres says whether the database is a Postgres one.
func (db *DB) Postgres() bool { return db.pg }

// Postgres says whether the transaction is a Postgres database's.
func (w Tx) Postgres() bool { return w.db.pg }

// Trigrams says whether the Postgres database has a trigram index of the
// responses (migration 0044), which a search can use.
func (db *DB) Trigrams() bool { return db.trigrams }

// noTallies keeps nothing: a database opened without Tallies.
type noTallies struct{}

func (noTallies) Stored(context.Context, Tx, *Result) error { return nil }
func (noTallies) Kept()                                     {}
func (noTallies) Dropped()                                  {}
func (noTallies) Flush(context.Context, Tx) error           { return nil }

// Background runs what goes on after its caller returned, until Close,
// which cancels the context it gave and waits for it.
type Background struct {
	mu     sync.Mutex
	closed bool
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// NewBackground returns a Background with nothing running.
func NewBackground() *Background {
	ctx, cancel := context.WithCancel(context.Background())
	return &Background{ctx: ctx, cancel: cancel}
}

// Go runs f, unless Close was called.
func (b *Background) Go(f func(ctx context.Context)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.closed {
		b.wg.Go(func() { f(b.ctx) })
	}
}

// Wait waits for what runs.
func (b *Background) Wait() { b.wg.Wait() }

// Close lets nothing more start, cancels what runs and waits for it.
func (b *Background) Close() {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	b.cancel()
	b.wg.Wait()
}

// OpenMigratedTo opens the database with the migrations numbered up to
// upTo ("0022") applied and nothing prepared: for tests of what a later
// migration or a later release does with a database of an older one,
// written to by hand meanwhile.
func OpenMigratedTo(ctx context.Context, path, upTo string, t Tallies) (*DB, error) {
	return open(ctx, path, upTo, t)
}

// Prepared says whether the database's write statements were prepared:
// false when it was opened at an older schema (OpenMigratedTo).
func (db *DB) Prepared() bool { return db.stmts.m != nil }

// InsertResult stores a result with its judgements in tx, unless its task
// already has one (saved is false), as SaveResult does.
func (w Tx) InsertResult(ctx context.Context, r *Result) (saved bool, err error) {
	return insertNewResult(ctx, w, w.db.nowText(), r)
}

// CommitTogether runs the writes in one transaction, as the committer
// batches the writes that arrive together, and returns each one's error:
// a write that fails is rolled back alone, the others stored.
func (db *DB) CommitTogether(ctx context.Context, writes []func(ctx context.Context, tx Tx) error) []error {
	batch := make([]*write, len(writes))
	for i, do := range writes {
		batch[i] = &write{ctx: ctx, do: do, done: make(chan error, 1)}
	}
	db.commitBatch(batch)
	errs := make([]error, len(batch))
	for i, w := range batch {
		errs[i] = <-w.done
	}
	return errs
}
