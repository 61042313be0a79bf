package store

import (
	"context"
	"encoding/json"
	"fmt"
)

// Embeddings returns the kept embeddings of a dataset's samples made by
// model, by sample row id.
func (db *DB) Embeddings(ctx context.Context, datasetID int64, model string) (map[int64][]float32, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT e.sample_id, e.vector FROM sample_embeddings e JOIN samples s ON s.id = e.sample_id
		WHERE s.dataset_id = ? AND e.model = ?`, datasetID, model)
	if err != nil {
		return nil, fmt.Errorf("embeddings: %w", err)
	}
	defer rows.Close()
	out := map[int64][]float32{}
	for rows.Next() {
		var id int64
		var raw string
		if err := rows.Scan(&id, &raw); err != nil {
			return nil, fmt.Errorf("embeddings: %w", err)
		}
		var v []float32
		if err := json.Unmarshal([]byte(raw), &v); err != nil {
			return nil, fmt.Errorf("embedding of sample %d: %w", id, err)
		}
		out[id] = v
	}
	return out, rows.Err()
}

// SaveEmbeddings keeps embeddings of samples made by model, in one transaction.
func (db *DB) SaveEmbeddings(ctx context.Context, model string, vectors map[int64][]float32) error {
	tx, err := db.BeginWrite(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for id, v := range vectors {
		raw, _ := json.Marshal(v)
		if _, err := tx.ExecContext(ctx, `INSERT INTO sample_embeddings (sample_id, model, vector) VALUES (?, ?, ?)
			ON CONFLICT (sample_id, model) DO UPDATE SET vector = excluded.vector`, id, model, string(raw)); err != nil {
			return fmt.Errorf("save embedding: %w", err)
		}
	}
	return tx.Commit()
}
