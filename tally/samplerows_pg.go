package tally

import (
	"context"
	"database/sql"
	"fmt"

	"assay/store"
)

// On Postgres a transaction's results are added to their samples' rows
// (sample_sums, sample_scores) just before it commits, with a statement or
// three for them all, as their totals are (batchtotals.go): a statement
// per result was a round trip to the server apiece. SQLite, which has no
// round trips, adds each result as it is stored (addSampleRows). Each
// write's results are kept apart until its savepoint is released.

// sampleRowsPg gathers a transaction's results for their samples' rows.
type sampleRowsPg struct {
	one []sampleRowPart // the current write's, until its savepoint is released
	all []sampleRowPart // the released writes', in the order stored
}

// sampleRowPart is what a result adds to its sample's rows.
type sampleRowPart struct {
	r *store.Result
	s sampleCounts
}

func (b *sampleRowsPg) add(r *store.Result, s sampleCounts) {
	b.one = append(b.one, sampleRowPart{r, s})
}

func (b *sampleRowsPg) keep() {
	b.all = append(b.all, b.one...)
	b.one = b.one[:0]
}

func (b *sampleRowsPg) drop() { b.one = b.one[:0] }

// sampleRowAdds is what a transaction's results of one sample under one
// condition add to its rows, in the order they were stored.
type sampleRowAdds struct {
	key     sampleRowKey
	results []*store.Result
	counts  sampleCounts // summed, the lines one after another
	scored  bool         // a result has a score: the row's sums change
}

// sums are the row's sums (was; nil for a new row) with the results' scores.
func (a *sampleRowAdds) sums(was rowSums) string {
	if !a.scored {
		return ""
	}
	for _, r := range a.results {
		was = was.add(r)
	}
	return was.text()
}

// flush writes the gathered results to their samples' rows: the rows a
// sample's first repetition makes, with every row's lines, in one
// statement; the rows that were there (later repetitions), read and
// written back with their sums added to, in two more.
func (b *sampleRowsPg) flush(ctx context.Context, tx store.Tx) error {
	b.keep()
	defer func() { b.all = b.all[:0] }()
	if len(b.all) == 0 {
		return nil
	}
	adds := b.bySample()
	rest, err := insertNewSampleRows(ctx, tx, adds)
	if err != nil || len(rest) == 0 {
		return err
	}
	return addToSampleRows(ctx, tx, rest)
}

// bySample gathers the results by their sample's row, in order.
func (b *sampleRowsPg) bySample() []*sampleRowAdds {
	var adds []*sampleRowAdds
	at := map[sampleRowKey]int{}
	for _, p := range b.all {
		r := p.r
		k := sampleRowKey{r.RunID, r.Condition, r.SampleRow}
		i, ok := at[k]
		if !ok {
			i = len(adds)
			at[k] = i
			adds = append(adds, &sampleRowAdds{key: k})
		}
		a := adds[i]
		a.results = append(a.results, r)
		a.counts.add(p.s)
		a.scored = a.scored || hasScores(r)
	}
	return adds
}

// insertNewSampleRows makes the rows of the samples whose first repetition
// is among adds, and writes every row's lines; it returns the adds to rows
// that were there already.
func insertNewSampleRows(ctx context.Context, tx store.Tx, adds []*sampleRowAdds) ([]*sampleRowAdds, error) {
	var made, lines rowsArgs
	for _, a := range adds {
		if a.results[0].Repetition == 1 {
			made.add(a, a.sums(nil))
		}
		if a.counts.scores != "" {
			lines.key(a.key)
			lines.texts = append(lines.texts, a.counts.scores)
		}
	}
	isNew := map[sampleRowKey]bool{}
	err := store.EachRow(ctx, tx, qNewSampleRowsPg, []any{made.runs, made.conditions, made.samples, made.results, made.errors,
		made.judgeErrors, made.claims, made.texts, lines.runs, lines.conditions, lines.samples, lines.texts}, func(rows *sql.Rows) error {
		var k sampleRowKey
		err := rows.Scan(&k.run, &k.condition, &k.sample)
		isNew[k] = true
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("sample aggregates: %w", err)
	}
	var rest []*sampleRowAdds
	for _, a := range adds {
		if !isNew[a.key] {
			rest = append(rest, a)
		}
	}
	return rest, nil
}

// addToSampleRows reads the sums of rows that were there and writes them
// back with the results added.
func addToSampleRows(ctx context.Context, tx store.Tx, rest []*sampleRowAdds) error {
	var keys rowsArgs
	for _, a := range rest {
		keys.key(a.key)
	}
	was := map[sampleRowKey]string{}
	err := store.EachRow(ctx, tx, qSampleSumsPg, []any{keys.runs, keys.conditions, keys.samples}, func(rows *sql.Rows) error {
		var k sampleRowKey
		var sums string
		err := rows.Scan(&k.run, &k.condition, &k.sample, &sums)
		was[k] = sums
		return err
	})
	if err != nil {
		return fmt.Errorf("sample aggregates: %w", err)
	}
	var added rowsArgs
	for _, a := range rest {
		sums := ""
		if a.scored {
			row, err := parseSums(was[a.key], nil, nil)
			if err != nil {
				return fmt.Errorf("sample aggregates of sample %d under %s: %w", a.key.sample, a.key.condition, err)
			}
			sums = a.sums(row)
		}
		added.add(a, sums)
	}
	if _, err := tx.ExecContext(ctx, qAddSampleSumsPg, added.runs, added.conditions, added.samples, added.results, added.errors,
		added.judgeErrors, added.claims, added.texts); err != nil {
		return fmt.Errorf("sample aggregates: %w", err)
	}
	return nil
}

// sampleRowKey names a sample's rows.
type sampleRowKey struct {
	run       int64
	condition string
	sample    int64
}

// rowsArgs are the columns of rows a statement takes as arrays.
type rowsArgs struct {
	runs, samples                        []int64
	conditions, texts                    []string
	results, errors, judgeErrors, claims []int64
}

// key adds a row's key.
func (r *rowsArgs) key(k sampleRowKey) {
	r.runs, r.conditions, r.samples = append(r.runs, k.run), append(r.conditions, k.condition), append(r.samples, k.sample)
}

// add adds a's row of sums, with sums.
func (r *rowsArgs) add(a *sampleRowAdds, sums string) {
	r.key(a.key)
	r.results, r.errors = append(r.results, int64(a.counts.results)), append(r.errors, int64(a.counts.errors))
	r.judgeErrors, r.claims = append(r.judgeErrors, int64(a.counts.judgeErrors)), append(r.claims, int64(a.counts.claims))
	r.texts = append(r.texts, sums)
}

// qNewSampleRowsPg makes the sample_sums rows that are not there yet
// ($1–$8, one row a place) and adds lines to sample_scores rows ($9–$12),
// returning the rows it made.
const qNewSampleRowsPg = `WITH made AS (INSERT INTO sample_sums (run_id, condition, sample_id, results, errors, judge_errors, claims, sums)
		SELECT * FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[], $7::bigint[], $8::text[])
		ON CONFLICT (run_id, condition, sample_id) DO NOTHING RETURNING run_id, condition, sample_id),
	lines AS (INSERT INTO sample_scores (run_id, condition, sample_id, scores)
		SELECT * FROM unnest($9::bigint[], $10::text[], $11::bigint[], $12::text[])
		ON CONFLICT (run_id, condition, sample_id) DO UPDATE SET scores = sample_scores.scores || excluded.scores)
	SELECT run_id, condition, sample_id FROM made`

// qSampleSumsPg reads the sums of sample_sums rows.
const qSampleSumsPg = `SELECT run_id, condition, sample_id, sums FROM sample_sums
	WHERE (run_id, condition, sample_id) IN (SELECT * FROM unnest($1::bigint[], $2::text[], $3::bigint[]))`

// qAddSampleSumsPg adds to sample_sums rows as qAddSampleSums does, one a place.
const qAddSampleSumsPg = `INSERT INTO sample_sums (run_id, condition, sample_id, results, errors, judge_errors, claims, sums)
		SELECT * FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[], $7::bigint[], $8::text[])
		ON CONFLICT (run_id, condition, sample_id) DO UPDATE SET results = sample_sums.results + excluded.results,
			errors = sample_sums.errors + excluded.errors, judge_errors = sample_sums.judge_errors + excluded.judge_errors,
			claims = sample_sums.claims + excluded.claims,
			sums = CASE WHEN excluded.sums = '' THEN sample_sums.sums ELSE excluded.sums END`
