package tally

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"assay/store"
)

// A search of a run's responses in Postgres goes through their trigram
// index (migrations_pg/0044) when the text is rare in the run: the planner
// reads the index for ILIKE where the text has trigrams and few responses
// hold them. Where it would read every response instead (a text most
// responses hold, "the"), the run's range of ids is read in parts at once,
// as SQLite's search reads it, with holds(), which looks for the text as it
// is before folding the case of the response (migrations_pg/0047): ILIKE
// folds every response it reads, four times the cost of the reading. When
// most responses hold the text, those lacking it are counted, few of them,
// instead of handing every result to the search. Which is asked of the
// planner: its estimate of the responses holding the text.
const qResponsesLike = `SELECT sample_id, condition FROM results WHERE run_id = ? AND response ILIKE ? ESCAPE '\'`

// searchResponsesPg finds text in the responses of a run of count
// results with ids first to last. ILIKE on text compared byte by byte
// matches ASCII letters whatever their case, as holds does.
func (t *Tally) searchResponsesPg(ctx context.Context, runID, first, last int64, count int, text string, m *SampleMatches) error {
	if !t.db.Trigrams() {
		return t.scanResponses(ctx, runID, first, last, text, m)
	}
	args := []any{runID, "%" + likeEscaper.Replace(text) + "%"}
	holding, err := t.estimatedRows(ctx, qResponsesLike, args)
	if err != nil {
		return err
	}
	switch {
	case holding >= lackingFrom(count):
		m.lacking = map[SampleKey]int{}
		return t.readParts(ctx, first, last, m, func(lo, hi int64) (string, []any) {
			return qResponsesLacking, []any{runID, lo, hi, text}
		})
	case holding >= scanFrom(count):
		return t.scanResponses(ctx, runID, first, last, text, m)
	}
	return store.EachRow(ctx, t.db.Read(), qResponsesLike, args, m.add)
}

// estimatedRows is how many rows the planner expects query to return.
func (t *Tally) estimatedRows(ctx context.Context, query string, args []any) (int, error) {
	var plan string
	if err := t.db.Read().QueryRowContext(ctx, "EXPLAIN (FORMAT JSON) "+query, args...).Scan(&plan); err != nil {
		return 0, fmt.Errorf("search responses: %w", err)
	}
	var explained []struct {
		Plan struct {
			Rows float64 `json:"Plan Rows"`
		}
	}
	if err := json.Unmarshal([]byte(plan), &explained); err != nil || len(explained) == 0 {
		return 0, fmt.Errorf("search responses: the planner's estimate %.100q: %v", plan, err)
	}
	return int(explained[0].Plan.Rows), nil
}

// likeEscaper escapes LIKE's wildcards and its escape.
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
