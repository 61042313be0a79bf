package store

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"strconv"

	"github.com/jackc/pgx/v5"

	"assay"
)

// copiedTables are the tables CopyTo copies, each after those it refers
// to. A run's lease, executors and claims are left behind (the processes
// holding them write to the file they came from), SQLite's response
// index (Postgres has none), and the one-time sign-in codes and the
// servers' addresses (the servers will start on the copy anew).
var copiedTables = []string{
	"datasets", "samples", "sample_embeddings", "conditions", "mcp_servers", "prices", "rubrics",
	"tokens", "sessions", "server_keys",
	"runs", "run_conditions", "results", "judgements", "scores", "reviews", "review_withdrawals", "share_links", "review_links",
	"pending_work", "condition_totals", "aggregates_pending", "sample_scores", "sample_sums", "model_totals",
	"sample_stats_kept", "report_scores_kept", "run_import_extra", "run_stops", "audits", "run_batches",
}

// CopyTo copies everything db holds into to, a new Postgres database,
// ids kept, in one transaction: all of it or nothing. A target holding
// any row is refused (ECONFLICT), naming a table that has some. It
// returns the rows copied by table.
func (db *DB) CopyTo(ctx context.Context, to *DB) (map[string]int64, error) {
	if !to.pg {
		return nil, assay.Errorf(assay.EINVALID, "the copy's target must be a Postgres database")
	}
	for _, table := range copiedTables {
		var rows bool
		if err := to.read.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM `+table+`)`).Scan(&rows); err != nil {
			return nil, fmt.Errorf("copy: %s: %w", table, err)
		}
		if rows {
			return nil, assay.Errorf(assay.ECONFLICT, "%s is not empty (its %s has rows): copy into a new database", Redacted(to.Path), table)
		}
	}
	// A snapshot of the source, read while the target is written.
	src, err := db.BeginRead(ctx)
	if err != nil {
		return nil, err
	}
	defer src.Rollback()
	conn, err := to.write.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("copy: %w", err)
	}
	defer conn.Close()
	counts := map[string]int64{}
	err = conn.Raw(func(dc any) error {
		pg := dc.(*pgConn).Conn.Conn()
		tx, err := pg.Begin(ctx)
		if err != nil {
			return err
		}
		defer tx.Rollback(ctx)
		for _, table := range copiedTables {
			n, err := copyTable(ctx, src, tx, table)
			if err != nil {
				return fmt.Errorf("copy %s: %w", table, err)
			}
			counts[table] = n
		}
		return tx.Commit(ctx)
	})
	if err != nil {
		return nil, err
	}
	// Statistics of the tables, which a copy does not make and the
	// planner needs at once: without them it joins a sample's judgements
	// and scores by reading every row instead of a few through indexes.
	// Vacuumed too: the rows' visibility settled once, here, rather than
	// by the first reads of each page, which a first search paid (a 150,000-result
	// run's searches read its responses in a third of the time).
	for _, table := range copiedTables {
		if _, err := conn.ExecContext(ctx, `VACUUM (ANALYZE) `+table); err != nil {
			return nil, fmt.Errorf("copy: analyze %s: %w", table, err)
		}
	}
	return counts, nil
}

// copyTable copies a table's rows with COPY, each value as the target's
// column takes it (SQLite keeps a value as it was given: a whole number
// in a REAL column, a number in a TEXT one), and moves the target's ids
// past those copied.
func copyTable(ctx context.Context, src *sql.Tx, tx pgx.Tx, table string) (int64, error) {
	rows, err := tx.Query(ctx, `SELECT column_name, data_type, is_identity = 'YES' FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position`, table)
	if err != nil {
		return 0, err
	}
	var columns, types []string
	identity := ""
	for rows.Next() {
		var name, typ string
		var isID bool
		if err := rows.Scan(&name, &typ, &isID); err != nil {
			rows.Close()
			return 0, err
		}
		columns, types = append(columns, name), append(types, typ)
		if isID {
			identity = name
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	list := ""
	for i, c := range columns {
		if i > 0 {
			list += ", "
		}
		list += `"` + c + `"`
	}
	read, err := src.QueryContext(ctx, `SELECT `+list+` FROM `+table)
	if err != nil {
		return 0, err
	}
	defer read.Close()
	source := &rowSource{rows: read, types: types, values: make([]any, len(columns))}
	n, err := tx.CopyFrom(ctx, pgx.Identifier{table}, columns, source)
	if err != nil {
		return 0, err
	}
	if source.err != nil {
		return 0, source.err
	}
	if identity != "" {
		if _, err := tx.Exec(ctx, `SELECT setval(pg_get_serial_sequence($1, $2), coalesce((SELECT max(`+identity+`) FROM `+table+`), 0) + 1, false)`,
			table, identity); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// rowSource hands COPY the source's rows, each value converted to its
// column's type.
type rowSource struct {
	rows   *sql.Rows
	types  []string
	values []any
	err    error
}

func (s *rowSource) Next() bool {
	if !s.rows.Next() {
		s.err = s.rows.Err()
		return false
	}
	ptrs := make([]any, len(s.values))
	for i := range s.values {
		ptrs[i] = &s.values[i]
	}
	if err := s.rows.Scan(ptrs...); err != nil {
		s.err = err
		return false
	}
	for i, v := range s.values {
		c, err := asColumn(v, s.types[i])
		if err != nil {
			s.err = err
			return false
		}
		s.values[i] = c
	}
	return true
}

func (s *rowSource) Values() ([]any, error) { return s.values, s.err }
func (s *rowSource) Err() error             { return s.err }

// asColumn is a SQLite value as a Postgres column of type typ takes it.
func asColumn(v any, typ string) (any, error) {
	if v == nil {
		return nil, nil
	}
	if as := columnTypes[typ]; as != nil {
		if out, ok, err := as(v); ok {
			return out, err
		}
	}
	return nil, fmt.Errorf("a value %T(%v) for a %s column", v, v, typ)
}

// columnTypes converts a value read from one database to a column type
// of the other; not ok for a value the type cannot take.
var columnTypes = map[string]func(v any) (any, bool, error){
	"text":             asText,
	"bigint":           asInteger,
	"integer":          asInteger,
	"double precision": asDouble,
	"bytea":            asBytes,
}

func asText(v any) (any, bool, error) {
	switch x := v.(type) {
	case string:
		return x, true, nil
	case []byte:
		return string(x), true, nil
	case int64:
		return strconv.FormatInt(x, 10), true, nil
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), true, nil
	}
	return nil, false, nil
}

func asInteger(v any) (any, bool, error) {
	switch x := v.(type) {
	case int64:
		return x, true, nil
	case float64:
		if x == math.Trunc(x) {
			return int64(x), true, nil
		}
	case string:
		n, err := strconv.ParseInt(x, 10, 64)
		return n, true, err
	}
	return nil, false, nil
}

func asDouble(v any) (any, bool, error) {
	switch x := v.(type) {
	case float64:
		return x, true, nil
	case int64:
		return float64(x), true, nil
	case string:
		f, err := strconv.ParseFloat(x, 64)
		return f, true, err
	}
	return nil, false, nil
}

func asBytes(v any) (any, bool, error) {
	switch x := v.(type) {
	case []byte:
		return x, true, nil
	case string:
		return []byte(x), true, nil
	}
	return nil, false, nil
}
