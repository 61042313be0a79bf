package store

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"
)

// SampleMatches are what a text search found in a run.
type SampleMatches struct {
	Samples   map[int64]bool     // samples whose input or reference holds the text
	Responses map[SampleKey]bool // samples whose response under a condition holds it
}

// SearchSamples finds text, ignoring ASCII case, in the input and reference of
// a run's samples and in the run's responses.
func (db *DB) SearchSamples(ctx context.Context, runID, datasetID int64, text string) (*SampleMatches, error) {
	pattern := "%" + likeEscaper.Replace(text) + "%"
	m := &SampleMatches{Samples: map[int64]bool{}, Responses: map[SampleKey]bool{}}
	rows, err := db.read.QueryContext(ctx, `SELECT id FROM samples WHERE dataset_id = ?1
		AND (input LIKE ?2 ESCAPE '\' OR reference LIKE ?2 ESCAPE '\')`, datasetID, pattern)
	if err != nil {
		return nil, fmt.Errorf("search samples: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("search samples: %w", err)
		}
		m.Samples[id] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search samples: %w", err)
	}
	return m, db.searchResponses(ctx, runID, text, m)
}

var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// The queries of a search of responses: through their trigram index
// (migration 0023), which answers LIKE without an ESCAPE clause only, and
// a scan of the results it lacks, in one snapshot; or by a scan of the
// run's responses.
const (
	qResponsesIndexed = `SELECT r.sample_id, r.condition FROM response_search s JOIN results r ON r.id = s.rowid
			WHERE s.response LIKE ?2 AND r.run_id = ?1
		UNION SELECT sample_id, condition FROM results
			WHERE id > (SELECT indexed_through FROM response_search_state) AND +run_id = ?1 AND response LIKE ?2`
	qResponsesScanned = `SELECT DISTINCT sample_id, condition FROM results WHERE run_id = ?1 AND response LIKE ?2 ESCAPE '\'`
	// qNotIndexed counts the results the index lacks, up to ?1: a search only
	// asks whether they are more than catchUpAt.
	qNotIndexed = `SELECT count(*) FROM (SELECT 1 FROM results WHERE id > (SELECT indexed_through FROM response_search_state) LIMIT ?1)`
)

// searchResponses finds text in a run's responses: through their index
// when the text has three characters or more, which the index needs, and
// neither % nor _, which LIKE without ESCAPE would read as wildcards; by a
// scan otherwise. Meeting many results the index lacks, it starts the
// index's catch-up.
func (db *DB) searchResponses(ctx context.Context, runID int64, text string, m *SampleMatches) error {
	if utf8.RuneCountInString(text) < 3 || strings.ContainsAny(text, "%_") {
		return db.responsesLike(ctx, qResponsesScanned, runID, "%"+likeEscaper.Replace(text)+"%", m)
	}
	if err := db.responsesLike(ctx, qResponsesIndexed, runID, "%"+text+"%", m); err != nil {
		return err
	}
	var lacking int
	if err := db.read.QueryRowContext(ctx, qNotIndexed, catchUpAt+1).Scan(&lacking); err != nil {
		return fmt.Errorf("search responses: %w", err)
	}
	if lacking > catchUpAt {
		db.startIndexing()
	}
	return nil
}

// responsesLike adds to m the samples and conditions query finds with pattern.
func (db *DB) responsesLike(ctx context.Context, query string, runID int64, pattern string, m *SampleMatches) error {
	rows, err := db.read.QueryContext(ctx, query, runID, pattern)
	if err != nil {
		return fmt.Errorf("search responses: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var k SampleKey
		if err := rows.Scan(&k.SampleRow, &k.Condition); err != nil {
			return fmt.Errorf("search responses: %w", err)
		}
		m.Responses[k] = true
	}
	return rows.Err()
}

// SampleHead is the beginning of a sample's texts, for tables.
type SampleHead struct {
	Input     string
	Reference string
}

// SampleHeads returns the first n characters (n+1 when there are more) of the
// input and reference of the samples with the given row ids.
func (db *DB) SampleHeads(ctx context.Context, ids []int64, n int) (map[int64]SampleHead, error) {
	out := make(map[int64]SampleHead, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	args := []any{n + 1}
	for _, id := range ids {
		args = append(args, id)
	}
	rows, err := db.read.QueryContext(ctx, `SELECT id, substr(input, 1, ?1), substr(reference, 1, ?1) FROM samples
		WHERE id IN (`+strings.Repeat("?, ", len(ids)-1)+`?)`, args...)
	if err != nil {
		return nil, fmt.Errorf("sample heads: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var h SampleHead
		if err := rows.Scan(&id, &h.Input, &h.Reference); err != nil {
			return nil, fmt.Errorf("sample heads: %w", err)
		}
		out[id] = h
	}
	return out, rows.Err()
}

// SampleNeighbours returns the row ids of the samples before and after the
// one at ordinal in a dataset's order; 0 where there is none.
func (db *DB) SampleNeighbours(ctx context.Context, datasetID int64, ordinal int) (prev, next int64, err error) {
	err = db.read.QueryRowContext(ctx, `SELECT
		coalesce((SELECT id FROM samples WHERE dataset_id = ?1 AND ordinal < ?2 ORDER BY ordinal DESC LIMIT 1), 0),
		coalesce((SELECT id FROM samples WHERE dataset_id = ?1 AND ordinal > ?2 ORDER BY ordinal LIMIT 1), 0)`,
		datasetID, ordinal).Scan(&prev, &next)
	if err != nil {
		return 0, 0, fmt.Errorf("sample neighbours: %w", err)
	}
	return prev, next, nil
}
