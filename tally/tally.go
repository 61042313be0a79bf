// Package tally keeps what the pages read fast, derived from the record
// the store keeps: per sample and condition, a run's scores and sums; per
// condition and model, its totals; the kept report and samples tables;
// the index of the responses. They live in the store's database, kept in
// step with the record inside the transactions that write it (the store
// calls a Tally through store.Tallies), and can be dropped and computed
// again from the record alone (assay rebuild). It also reads them: the
// data of a run's report, progress and samples table, and the samples
// search.
package tally

import (
	"context"
	"database/sql"
	"fmt"

	"assay/store"
)

// Tally keeps a database's tallies in step with its record.
type Tally struct {
	db      *store.DB
	index   *searchIndexer
	keeping *store.Background // kept tables being written (kept.go)
}

// New returns the tallies of a database to be opened with store.OpenWith.
func New() *Tally {
	return &Tally{index: newSearchIndexer(), keeping: store.NewBackground()}
}

// Open opens the database at path (a SQLite file or a Postgres DSN) with
// its tallies kept in step: what every process that writes results or
// reads reports opens.
func Open(ctx context.Context, path string) (*store.DB, error) {
	return store.OpenWith(ctx, path, New())
}

// Of returns the tallies of a database opened with them (Open).
func Of(db *store.DB) *Tally {
	t, ok := db.Tallies().(*Tally)
	if !ok {
		panic("tally: the database was opened without its tallies (tally.Open)")
	}
	return t
}

var _ store.Tallies = (*Tally)(nil)

// Statements are the statements each result's tallies are written with.
func (t *Tally) Statements() []string {
	return []string{qSampleSums, qNewSampleSums, qAddSampleSums, qAddSampleScores, qCountResults, qConditionTotals,
		qAddConditionTotals, qSetConditionTotals, qAddModelTotals}
}

// Open computes the tallies of the runs stored before they were kept.
func (t *Tally) Open(ctx context.Context, db *store.DB) error {
	t.db = db
	return t.backfillAggregates(ctx)
}

// Close stops the index's catch-up and the kept tables' writes, and waits
// for them.
func (t *Tally) Close() {
	t.stopIndexing()
	t.keeping.Close()
}

// Begin starts what a write transaction's results add.
func (t *Tally) Begin() store.TxTallies { return &txTallies{} }

// txTallies is what a transaction's results add: each result's sample
// rows at once on SQLite and before the transaction commits on Postgres
// (samplerows_pg.go), the totals of its run, condition and model gathered
// and written before it commits (batchtotals.go).
type txTallies struct {
	totals batchTotals
	rows   sampleRowsPg
}

func (x *txTallies) Stored(ctx context.Context, tx store.Tx, r *store.Result) error {
	if tx.Postgres() {
		s, c := countsOf(r)
		x.rows.add(r, s)
		x.totals.add(r, c)
		return nil
	}
	return addAggregates(ctx, tx, &x.totals, r)
}

func (x *txTallies) Kept() {
	x.totals.keep()
	x.rows.keep()
}

func (x *txTallies) Dropped() {
	x.totals.drop()
	x.rows.drop()
}

// Flush writes the totals first: the run's row each updates holds another
// server's flush of the same run until this transaction commits.
func (x *txTallies) Flush(ctx context.Context, tx store.Tx) error {
	if err := flushTotals(ctx, tx, &x.totals); err != nil {
		return err
	}
	return x.rows.flush(ctx, tx)
}

// Removed takes results just deleted out of their run's count and
// aggregates, and drops the run's kept tables, folded from results that
// are gone.
func (t *Tally) Removed(ctx context.Context, tx *sql.Tx, runID int64, gone []store.Result) error {
	if _, err := tx.ExecContext(ctx, `UPDATE runs SET results_count = results_count - ? WHERE id = ?`, len(gone), runID); err != nil {
		return err
	}
	if err := dropFromAggregates(ctx, tx, runID, gone); err != nil {
		return err
	}
	for _, table := range keptTables {
		if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE run_id = ?`, runID); err != nil {
			return err
		}
	}
	return nil
}

// clearIndexPast is how many results a run deleted must have for the
// response index to be emptied first (clearResponseIndex): the store
// deletes them a batch of 2,000 at a time.
var clearIndexPast = 2000 // a variable for tests

// Deleting empties the response index when a run of more than
// clearIndexPast results is deleted (clearResponseIndex).
func (t *Tally) Deleting(ctx context.Context, tx *sql.Tx, results int) error {
	if results > clearIndexPast && !t.db.Postgres() {
		return clearResponseIndex(ctx, tx)
	}
	return nil
}

// Deleted starts the emptied index's catch-up now, as after a run, not at
// the next search.
func (t *Tally) Deleted(ctx context.Context, results int) error {
	if results > clearIndexPast {
		if err := t.catchUpPast(ctx, 0); err != nil {
			return fmt.Errorf("response index: %w", err)
		}
	}
	return nil
}

// Rebuild replaces a run's count of results, aggregates and kept tables
// by ones computed from its record, and its entries in the response index
// as far as the index has come (the catch-up adds the rest; Postgres has
// no such index). The last result's id only grows: the version of the
// run's results (ResultsVersion) never goes back to one a cache holds.
func (t *Tally) Rebuild(ctx context.Context, tx *sql.Tx, runID int64) error {
	if _, err := tx.ExecContext(ctx, `UPDATE runs SET
		results_count = (SELECT count(*) FROM results WHERE run_id = ?1),
		results_first = (SELECT coalesce(min(id), 0) FROM results WHERE run_id = ?1),
		results_last = max(results_last, (SELECT coalesce(max(id), 0) FROM results WHERE run_id = ?1)) WHERE id = ?1`, runID); err != nil {
		return fmt.Errorf("rebuild run %d: %w", runID, err)
	}
	if err := rebuildAggregates(ctx, tx, runID); err != nil {
		return err
	}
	if t.db.Postgres() {
		return nil
	}
	for _, q := range []string{
		`DELETE FROM response_search WHERE rowid IN (SELECT id FROM results WHERE run_id = ?)`,
		`INSERT INTO response_search (rowid, response) SELECT id, response FROM results
			WHERE run_id = ? AND response != '' AND id <= (SELECT indexed_through FROM response_search_state)`,
	} {
		if _, err := tx.ExecContext(ctx, q, runID); err != nil {
			return fmt.Errorf("rebuild run %d: response index: %w", runID, err)
		}
	}
	return nil
}
