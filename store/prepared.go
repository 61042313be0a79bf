package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
)

// The statements every task of a run writes with are prepared once, on the
// write connection, when the database opens: parsing one again for each
// result, judgement and score took an eighth of the engine's CPU.

// Tx is a write transaction that runs prepared statements.
type Tx struct {
	*sql.Tx
	db    *DB
	bound map[string]*sql.Stmt // statements bound to Tx so far, by their text
	adds  TxTallies            // what its results add to the tallies, written before it commits
}

func (db *DB) writer(tx *sql.Tx) Tx {
	var adds TxTallies = noTallies{}
	if db.tallies != nil {
		adds = db.tallies.Begin()
	}
	return Tx{tx, db, map[string]*sql.Stmt{}, adds}
}

// commit writes what the transaction's results add to the tallies and commits.
func (w Tx) commit(ctx context.Context) error {
	if err := w.adds.Flush(ctx, w); err != nil {
		return err
	}
	return w.Commit()
}

// Prepared returns the statement of that text, prepared once for the database,
// bound to the transaction once: Tx.StmtContext makes a new one each time.
func (w Tx) Prepared(ctx context.Context, query string) (*sql.Stmt, error) {
	if st, ok := w.bound[query]; ok {
		return st, nil
	}
	st, err := w.db.prepared(query)
	if err != nil {
		return nil, err
	}
	st = w.StmtContext(ctx, st)
	w.bound[query] = st
	return st, nil
}

// ExecPrepared runs a statement in the transaction, prepared once for the database.
func (w Tx) ExecPrepared(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := w.Prepared(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

// QueryTextPrepared reads one text in the transaction with a query prepared once
// for the database; "" when the query finds no row.
func (w Tx) QueryTextPrepared(ctx context.Context, query string, args ...any) (string, error) {
	st, err := w.Prepared(ctx, query)
	if err != nil {
		return "", err
	}
	var s string
	err = st.QueryRowContext(ctx, args...).Scan(&s)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return s, err
}

// statements are the write statements prepared so far, by their text.
type statements struct {
	mu sync.Mutex
	m  map[string]*sql.Stmt
}

// prepared returns the statement of that text, prepared at Open: one
// prepared later would wait for the write connection, which the calling
// transaction holds.
func (db *DB) prepared(query string) (*sql.Stmt, error) {
	db.stmts.mu.Lock()
	st, ok := db.stmts.m[query]
	db.stmts.mu.Unlock()
	if ok {
		return st, nil
	}
	return nil, fmt.Errorf("statement not prepared at open: %.60s", query)
}

// prepareWrites prepares the statements of hotWrites.
func (db *DB) prepareWrites(ctx context.Context) error {
	db.stmts.m = map[string]*sql.Stmt{}
	hot := hotWrites
	if db.tallies != nil {
		hot = append(hot[:len(hot):len(hot)], db.tallies.Statements()...)
	}
	for _, q := range hot {
		st, err := db.write.PrepareContext(ctx, q)
		if err != nil {
			return fmt.Errorf("prepare %.60s: %w", q, err)
		}
		db.stmts.m[q] = st
	}
	return nil
}

// closeStatements closes the prepared statements.
func (db *DB) closeStatements() {
	db.stmts.mu.Lock()
	defer db.stmts.mu.Unlock()
	for _, st := range db.stmts.m {
		st.Close()
	}
	db.stmts.m = nil
}

// hotWrites are the statements prepared at Open: those of each task.
var hotWrites = append([]string{qSavepoint, qRollbackTo, qRelease, qInsertResult, qDeletePending, qInsertJudgement, qSavePending}, qInsertScores...)
