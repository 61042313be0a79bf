package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"assay"
	"assay/config"
)

// CreateRun stores a pending run with a snapshot of each of its conditions.
func (db *DB) CreateRun(ctx context.Context, r *Run) error {
	return db.CreateLeasedRun(ctx, r, nil, 0)
}

// CreateLeasedRun stores a pending run, leased to h for ttl in the same
// transaction (when h is not nil): no other process can start the run
// between its creation and its start by its creator.
func (db *DB) CreateLeasedRun(ctx context.Context, r *Run, h *Holder, ttl time.Duration) error {
	tx, err := db.BeginWrite(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := createRun(ctx, tx, db.nowText(), r); err != nil {
		return err
	}
	if h != nil {
		now, err := db.sharedNow(ctx, tx)
		if err != nil {
			return err
		}
		if err := acquireLease(ctx, tx, r.ID, *h, now, ttl, nil); err != nil {
			return err
		}
	}
	return tx.Commit()
}

func createRun(ctx context.Context, tx *sql.Tx, now string, r *Run) error {
	r.Status = RunPending
	r.CreatedAt = parseTime(now)
	if r.CreatedBy == "" {
		r.CreatedBy = Actor(ctx)
	}
	cfg := []byte("{}")
	if r.Config != nil {
		var err error
		if cfg, err = json.Marshal(r.Config); err != nil {
			return fmt.Errorf("insert run: config: %w", err)
		}
	}
	err := tx.QueryRowContext(ctx, `INSERT INTO runs (name, dataset_id, status, config, repetitions, total_tasks, budget_usd, created_at, created_by)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		RETURNING id`, r.Name, r.DatasetID, r.Status, string(cfg), r.Repetitions, r.TotalTasks,
		r.BudgetUSD, r.CreatedAt.Format(timeFormat), r.CreatedBy).Scan(&r.ID)
	if err == nil && r.RejudgedFrom != 0 {
		_, err = tx.ExecContext(ctx, `UPDATE runs SET rejudged_from = ? WHERE id = ?`, r.RejudgedFrom, r.ID)
	}
	if err != nil {
		return fmt.Errorf("insert run: %w", err)
	}
	for i, c := range r.Conditions {
		snap, _ := json.Marshal(c)
		if _, err := tx.ExecContext(ctx, `INSERT INTO run_conditions (run_id, position, name, snapshot) VALUES (?, ?, ?, ?)`,
			r.ID, i, c.Name, string(snap)); err != nil {
			return fmt.Errorf("insert run condition %q: %w", c.Name, err)
		}
	}
	return nil
}

const RunColumns = `r.id, r.name, r.dataset_id, r.status, r.config, r.repetitions, r.total_tasks, r.budget_usd,
	r.error, r.created_at, r.started_at, r.finished_at, r.origin, r.created_by, r.tags, r.note, r.headline, r.rejudged_from`

func ScanRun(row interface{ Scan(...any) error }, extra ...any) (*Run, error) {
	var r Run
	var cfg, created, tags string
	var started, finished sql.NullString
	var rejudged sql.NullInt64
	dest := append([]any{&r.ID, &r.Name, &r.DatasetID, &r.Status, &cfg, &r.Repetitions, &r.TotalTasks,
		&r.BudgetUSD, &r.Message, &created, &started, &finished, &r.Origin, &r.CreatedBy, &tags, &r.Note, &r.Headline, &rejudged}, extra...)
	err := row.Scan(dest...)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("run: %w", assay.ErrNotFound)
	} else if err != nil {
		return nil, fmt.Errorf("scan run: %w", err)
	}
	if r.Config, err = readConfig(cfg); err != nil {
		r.Config, r.configErr = nil, assay.Wrapf(assay.EINTERNAL, err, "Run %d's stored config cannot be read", r.ID)
	}
	r.Tags = SplitTags(tags)
	r.RejudgedFrom = rejudged.Int64
	r.CreatedAt = parseTime(created)
	r.StartedAt = parseTimePtr(started)
	r.FinishedAt = parseTimePtr(finished)
	return &r, nil
}

// readConfig decodes the config a run stored, over the defaults of an
// empty file (config.Stored); a run stored without one has the defaults.
// A run whose config cannot be read is listed without it (Config nil);
// reading the run alone (DB.Run) is then an error saying so.
func readConfig(text string) (*config.Config, error) {
	if text == "" {
		text = "{}"
	}
	return config.Stored([]byte(text))
}

// HiddenRuns are the statuses of runs no page or list shows: being
// deleted, being imported.
const HiddenRuns = `('deleting', 'importing')`

// Run returns one run with its condition snapshots.
func (db *DB) Run(ctx context.Context, id int64) (*Run, error) {
	r, err := ScanRun(db.read.QueryRowContext(ctx, `SELECT `+RunColumns+` FROM runs r WHERE r.id = ? AND r.status NOT IN `+HiddenRuns, id))
	if err != nil {
		return nil, err
	}
	if r.configErr != nil {
		return nil, r.configErr
	}
	conds, err := db.runConditions(ctx, `WHERE run_id = ?`, id)
	if err != nil {
		return nil, err
	}
	r.Conditions = conds[id]
	return r, nil
}

// runConditions reads the condition snapshots of the runs a WHERE clause
// picks, by run, in launch order.
func (db *DB) runConditions(ctx context.Context, where string, args ...any) (map[int64][]assay.Condition, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT run_id, snapshot FROM run_conditions `+where+` ORDER BY run_id, position`, args...)
	if err != nil {
		return nil, fmt.Errorf("run conditions: %w", err)
	}
	defer rows.Close()
	out := map[int64][]assay.Condition{}
	for rows.Next() {
		var id int64
		var snap string
		var c assay.Condition
		if err := rows.Scan(&id, &snap); err != nil {
			return nil, fmt.Errorf("run conditions: %w", err)
		}
		if err := json.Unmarshal([]byte(snap), &c); err != nil {
			return nil, fmt.Errorf("run condition snapshot: %w", err)
		}
		out[id] = append(out[id], c)
	}
	return out, rows.Err()
}

// RunText is what a search of the runs list looks in.
type RunText struct {
	ID                      int64
	Name, Note, DatasetName string
	Tags, ConditionNames    []string
}

// RunTexts lists the texts of RunList's runs, in its order: a search
// reads them alone, not the runs' configurations, totals and conditions
// row by row (a second at 30,000 runs of 20 conditions).
func (db *DB) RunTexts(ctx context.Context) ([]RunText, error) {
	var out []RunText
	err := EachRow(ctx, db.read, `SELECT r.id, r.name, r.note, d.name, r.tags,
			coalesce((SELECT group_concat(name, char(31)) FROM run_conditions WHERE run_id = r.id), '')
		FROM runs r JOIN datasets d ON d.id = r.dataset_id
		WHERE r.status NOT IN `+HiddenRuns+` ORDER BY r.id DESC`, nil, func(rows *sql.Rows) error {
		var t RunText
		var tags, conditions string
		if err := rows.Scan(&t.ID, &t.Name, &t.Note, &t.DatasetName, &tags, &conditions); err != nil {
			return err
		}
		t.Tags = SplitTags(tags)
		if conditions != "" {
			t.ConditionNames = strings.Split(conditions, "\x1f")
		}
		out = append(out, t)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("run texts: %w", err)
	}
	return out, nil
}

// RunCount counts the runs RunList lists.
func (db *DB) RunCount(ctx context.Context) (int, error) {
	var n int
	if err := db.read.QueryRowContext(ctx, `SELECT count(*) FROM runs WHERE status NOT IN `+HiddenRuns).Scan(&n); err != nil {
		return 0, fmt.Errorf("count runs: %w", err)
	}
	return n, nil
}

// ConditionNames names the conditions of the runs with ids low to high,
// in order, by run.
func (db *DB) ConditionNames(ctx context.Context, low, high int64) (map[int64][]string, error) {
	out := map[int64][]string{}
	err := EachRow(ctx, db.read, `SELECT run_id, name FROM run_conditions WHERE run_id BETWEEN ? AND ? ORDER BY run_id, position`,
		[]any{low, high}, func(rows *sql.Rows) error {
			var id int64
			var name string
			if err := rows.Scan(&id, &name); err != nil {
				return err
			}
			out[id] = append(out[id], name)
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("run conditions: %w", err)
	}
	return out, nil
}

// CompletedRuns returns the ids of a dataset's completed runs, newest first.
func (db *DB) CompletedRuns(ctx context.Context, datasetID int64) ([]int64, error) {
	return db.runIDs(ctx, "completed runs", `SELECT id FROM runs WHERE dataset_id = ? AND status = ? ORDER BY id DESC`,
		datasetID, RunCompleted)
}

// UnfinishedRuns returns the ids of runs that are pending or running, oldest first.
func (db *DB) UnfinishedRuns(ctx context.Context) ([]int64, error) {
	return db.runIDs(ctx, "unfinished runs", `SELECT id FROM runs WHERE status IN (?, ?) ORDER BY id`, RunPending, RunRunning)
}

// runIDs returns the ids a query selects; what names it in errors.
func (db *DB) runIDs(ctx context.Context, what, query string, args ...any) ([]int64, error) {
	rows, err := db.read.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return ids, nil
}

// SetRunStatus records a run's status. Running stamps the start once; a finished
// status stamps the end; running again clears the end.
func (db *DB) SetRunStatus(ctx context.Context, id int64, status RunStatus, message string) error {
	now := db.nowText()
	var q string
	if status.Finished() {
		q = `UPDATE runs SET status = ?, error = ?, finished_at = ? WHERE id = ?`
	} else {
		q = `UPDATE runs SET status = ?, error = ?, started_at = coalesce(started_at, ?), finished_at = NULL, headline = '' WHERE id = ?`
	}
	res, err := db.write.ExecContext(ctx, q, status, message, now, id)
	if err != nil {
		return fmt.Errorf("set run status: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("run %d: %w", id, assay.ErrNotFound)
	}
	return nil
}
