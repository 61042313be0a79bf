package store

import (
	"context"
	"fmt"
	"strconv"
)

// SliceField is a metadata field of a dataset's samples that can slice a
// report: the number of its distinct values.
type SliceField struct {
	Name   string
	Values int
}

// maxSliceValues bounds the values of a field worth slicing by: MMLU's 57
// subjects fit; a free-text field does not.
const maxSliceValues = 200

// SliceFields lists the metadata fields of a dataset's samples that take
// between 2 and 200 distinct plain values (text, numbers, booleans), by name.
func (db *DB) SliceFields(ctx context.Context, datasetID int64) ([]SliceField, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT j.key, count(DISTINCT j.value) FROM samples s, json_each(s.metadata) j
		WHERE s.dataset_id = ? AND j.type IN ('text', 'integer', 'real', 'true', 'false')
		GROUP BY j.key HAVING count(DISTINCT j.value) BETWEEN 2 AND ? ORDER BY j.key`, datasetID, maxSliceValues)
	if err != nil {
		return nil, fmt.Errorf("slice fields: %w", err)
	}
	defer rows.Close()
	var out []SliceField
	for rows.Next() {
		var f SliceField
		if err := rows.Scan(&f.Name, &f.Values); err != nil {
			return nil, fmt.Errorf("slice fields: %w", err)
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// SliceValues returns, by sample row id, the value of a metadata field as
// text; samples without it are left out.
func (db *DB) SliceValues(ctx context.Context, datasetID int64, field string) (map[int64]string, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT s.id, j.value, j.type FROM samples s, json_each(s.metadata) j
		WHERE s.dataset_id = ? AND j.key = ? AND j.type IN ('text', 'integer', 'real', 'true', 'false')`, datasetID, field)
	if err != nil {
		return nil, fmt.Errorf("slice values: %w", err)
	}
	defer rows.Close()
	out := map[int64]string{}
	for rows.Next() {
		var id int64
		var v any
		var typ string
		if err := rows.Scan(&id, &v, &typ); err != nil {
			return nil, fmt.Errorf("slice values: %w", err)
		}
		switch x := v.(type) {
		case string:
			out[id] = x
		case int64:
			if typ == "true" || typ == "false" {
				out[id] = typ
			} else {
				out[id] = strconv.FormatInt(x, 10)
			}
		case float64:
			out[id] = strconv.FormatFloat(x, 'f', -1, 64)
		default:
			out[id] = fmt.Sprint(x)
		}
	}
	return out, rows.Err()
}
