package store

import (
	"context"
	"fmt"
	"strings"

	"assay"
)

// Prices returns the price table, by model.
func (db *DB) Prices(ctx context.Context) ([]assay.Price, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT model, input_per_mtok, output_per_mtok, cache_read_per_mtok,
		cache_write_per_mtok, updated_at FROM prices ORDER BY model`)
	if err != nil {
		return nil, fmt.Errorf("prices: %w", err)
	}
	defer rows.Close()
	var out []assay.Price
	for rows.Next() {
		var p assay.Price
		var updated string
		if err := rows.Scan(&p.Model, &p.InputPerMTok, &p.OutputPerMTok, &p.CacheReadPerMTok, &p.CacheWritePerMTok,
			&updated); err != nil {
			return nil, fmt.Errorf("prices: %w", err)
		}
		p.UpdatedAt = parseTime(updated)
		out = append(out, p)
	}
	return out, rows.Err()
}

// SetPrice adds or changes one model's price.
func (db *DB) SetPrice(ctx context.Context, p assay.Price) error {
	p.Model = strings.TrimSpace(p.Model)
	if p.Model == "" {
		return assay.Errorf(assay.EINVALID, "model: required")
	}
	if p.InputPerMTok < 0 || p.OutputPerMTok < 0 || p.CacheReadPerMTok < 0 || p.CacheWritePerMTok < 0 {
		return assay.Errorf(assay.EINVALID, "%s: prices cannot be negative", p.Model)
	}
	_, err := db.write.ExecContext(ctx, `INSERT INTO prices (model, input_per_mtok, output_per_mtok, cache_read_per_mtok,
		cache_write_per_mtok, updated_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (model) DO UPDATE SET
		input_per_mtok = excluded.input_per_mtok, output_per_mtok = excluded.output_per_mtok,
		cache_read_per_mtok = excluded.cache_read_per_mtok, cache_write_per_mtok = excluded.cache_write_per_mtok,
		updated_at = excluded.updated_at`,
		p.Model, p.InputPerMTok, p.OutputPerMTok, p.CacheReadPerMTok, p.CacheWritePerMTok, db.nowText())
	if err != nil {
		return fmt.Errorf("set price: %w", err)
	}
	return nil
}

// DeletePrice removes a model from the price table.
func (db *DB) DeletePrice(ctx context.Context, model string) error {
	if _, err := db.write.ExecContext(ctx, `DELETE FROM prices WHERE model = ?`, model); err != nil {
		return fmt.Errorf("delete price: %w", err)
	}
	return nil
}
