package tally

import (
	"context"
	"database/sql"
	"fmt"
	"math/bits"
	"runtime"
	"slices"
	"strings"
	"unicode/utf8"

	"golang.org/x/sync/errgroup"

	"assay/store"
)

// SampleMatches are what a text search found in a run.
type SampleMatches struct {
	Samples   map[int64]bool // samples whose input or reference holds the text
	responses responseSet    // samples whose response under a condition holds it
	// lacking, when the text is in most responses, counts instead the
	// results of each sample and condition whose response lacks it, and
	// responses is empty: handing every result of a run to the search
	// cost half of it (see searchResponses).
	lacking map[SampleKey]int
}

// Response reports whether a response of the sample under the condition
// holds the text; c.Results is how many results it has.
func (m *SampleMatches) Response(c *SampleCounts) bool {
	if m.lacking != nil {
		return m.lacking[c.SampleKey] < c.Results
	}
	i := slices.Index(m.responses.conditions, c.Condition)
	return i >= 0 && m.responses.has(c.SampleRow, i)
}

// Responses lists, of the samples and conditions counted, those whose
// responses hold the text.
func (m *SampleMatches) Responses(counted []SampleCounts) map[SampleKey]bool {
	out := map[SampleKey]bool{}
	for i := range counted {
		if m.Response(&counted[i]) {
			out[counted[i].SampleKey] = true
		}
	}
	return out
}

// add adds what a row of a search's query found: a sample and condition
// whose response holds the text, or one more result of them lacking it.
func (m *SampleMatches) add(rows *sql.Rows) error {
	if m.lacking == nil {
		return m.responses.add(rows)
	}
	var k SampleKey
	if err := rows.Scan(&k.SampleRow, &k.Condition); err != nil {
		return err
	}
	m.lacking[k]++
	return nil
}

// merge adds what o found.
func (m *SampleMatches) merge(o *SampleMatches) {
	m.responses.merge(&o.responses)
	for k, n := range o.lacking {
		m.lacking[k] += n
	}
}

// responseSet is a set of samples under conditions: a bit per sample row
// from first under each condition, named by its place in conditions. A
// search meeting every response of a large run adds one per result: into
// a map, the adds were an eighth of the search's CPU.
type responseSet struct {
	conditions []string
	first      int64      // the sample row of each condition's bit 0, a multiple of 64
	bits       [][]uint64 // by condition
}

// add adds the row's sample and condition (sample_id, condition).
func (s *responseSet) add(rows *sql.Rows) error {
	var row int64
	var condition sql.RawBytes
	if err := rows.Scan(&row, &condition); err != nil {
		return err
	}
	i := slices.IndexFunc(s.conditions, func(c string) bool { return c == string(condition) })
	if i < 0 {
		i = s.place(string(condition))
	}
	s.put(row, i)
	return nil
}

// place returns the place of a condition, adding it when it is new.
func (s *responseSet) place(condition string) int {
	if i := slices.Index(s.conditions, condition); i >= 0 {
		return i
	}
	s.conditions = append(s.conditions, condition)
	s.bits = append(s.bits, nil)
	return len(s.conditions) - 1
}

// put adds the sample row under the condition at place i.
func (s *responseSet) put(row int64, i int) {
	if row < s.first { // before every row so far: the bits move up
		shift := int((s.first - row&^63) / 64)
		for c, b := range s.bits {
			if len(b) > 0 {
				s.bits[c] = append(make([]uint64, shift, shift+len(b)), b...)
			}
		}
		s.first = row &^ 63
	}
	at := row - s.first
	w := int(at / 64)
	b := s.bits[i]
	if w >= len(b) {
		b = slices.Grow(b, w+1-len(b))[:w+1]
		s.bits[i] = b
	}
	b[w] |= 1 << (at % 64)
}

// has reports whether the set holds the sample row under the condition at place i.
func (s *responseSet) has(row int64, i int) bool {
	if i >= len(s.bits) || row < s.first {
		return false
	}
	at := row - s.first
	w := int(at / 64)
	return w < len(s.bits[i]) && s.bits[i][w]&(1<<(at%64)) != 0
}

// each calls f with every sample row and place of a condition in the set.
func (s *responseSet) each(f func(row int64, i int)) {
	for i, b := range s.bits {
		for w, word := range b {
			for word != 0 {
				f(s.first+int64(w*64+bits.TrailingZeros64(word)), i)
				word &= word - 1
			}
		}
	}
}

// merge adds the samples and conditions of o.
func (s *responseSet) merge(o *responseSet) {
	for i, c := range o.conditions {
		place := s.place(c)
		if o.first != s.first {
			o.each(func(row int64, j int) {
				if j == i {
					s.put(row, place)
				}
			})
			continue
		}
		b := s.bits[place]
		if len(b) < len(o.bits[i]) {
			b = slices.Grow(b, len(o.bits[i])-len(b))[:len(o.bits[i])]
			s.bits[place] = b
		}
		for w, word := range o.bits[i] {
			b[w] |= word
		}
	}
}

// SearchSamples finds text, ignoring ASCII case, in the input and reference of
// a run's samples and in the run's responses.
func (t *Tally) SearchSamples(ctx context.Context, runID, datasetID int64, text string) (*SampleMatches, error) {
	defer t.index.waitedFor()()
	m := &SampleMatches{Samples: map[int64]bool{}}
	// The dataset's first sample row, where the matches' bits start.
	err := t.db.Read().QueryRowContext(ctx, `SELECT coalesce((SELECT id FROM samples WHERE dataset_id = ? ORDER BY ordinal LIMIT 1), 0)`,
		datasetID).Scan(&m.responses.first)
	if err != nil {
		return nil, fmt.Errorf("search samples: %w", err)
	}
	m.responses.first &^= 63
	// The samples' texts are read beside the responses: they touch
	// apart fields of m.
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		err := store.EachRow(gctx, t.db.Read(), `SELECT id FROM samples WHERE dataset_id = ?1 AND (holds(input, ?2) OR holds(reference, ?2))`,
			[]any{datasetID, text}, func(rows *sql.Rows) error {
				var id int64
				err := rows.Scan(&id)
				m.Samples[id] = true
				return err
			})
		if err != nil {
			return fmt.Errorf("search samples: %w", err)
		}
		return nil
	})
	g.Go(func() error { return t.searchResponses(gctx, runID, text, m) })
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return m, nil
}

// A search of a run's responses reads them through their trigram index
// (migration 0023) when the text is rare in the run, and in id order when
// it is not. The index names the candidates — the results whose response
// holds every trigram of the text, found in its lists of ids without
// reading a response — and each is read and checked against the text; the
// results the index lacks are scanned. A text such as "the" is a candidate
// in every result, and a candidate read through the index costs about
// twice a result read in id order: when the candidates are half the
// results or more (counted in a part of the run's ids), the run's range of
// ids is read instead, in parts read at once on the read connections
// (LIKE handed to FTS5 would read each response by a query of its own).
// When most results hold the text (counted in the same part, with holds()
// when most are candidates), the scan counts the results whose response
// lacks it instead, few of them: handing each result found to the search
// (a row for database/sql, a bit set) was half of the search's CPU.
const (
	// qCandidates counts the index's candidates among ids ?2 to ?3.
	qCandidates       = `SELECT count(*) FROM response_search WHERE response_search MATCH ?1 AND rowid BETWEEN ?2 AND ?3`
	qResponsesIndexed = `SELECT r.sample_id, r.condition FROM response_search JOIN results r ON r.id = response_search.rowid
			WHERE response_search MATCH ?2 AND response_search.rowid BETWEEN ?3 AND ?4
			AND r.run_id = ?1 AND holds(r.response, ?5)
		UNION ALL SELECT sample_id, condition FROM results
			WHERE id > max((SELECT indexed_through FROM response_search_state), ?3 - 1) AND id <= ?4
			AND +run_id = ?1 AND holds(response, ?5)`
	// qResponsesScanned reads the results with ids ?2 to ?3.
	qResponsesScanned = `SELECT sample_id, condition FROM results
		WHERE id BETWEEN ?2 AND ?3 AND +run_id = ?1 AND holds(response, ?4)`
	// qResponsesLacking reads the results with ids ?2 to ?3 for those
	// whose response lacks the text.
	qResponsesLacking = `SELECT sample_id, condition FROM results
		WHERE id BETWEEN ?2 AND ?3 AND +run_id = ?1 AND NOT holds(response, ?4)`
	// qHolding counts the results with ids ?1 to ?2 whose response holds
	// the text.
	qHolding = `SELECT count(*) FROM results WHERE id BETWEEN ?1 AND ?2 AND holds(response, ?3)`
	// qNotIndexed counts the results past id ?1 (the index's end), up to
	// ?2: a search only asks whether they are more than catchUpAt.
	qNotIndexed = `SELECT count(*) FROM (SELECT 1 FROM results WHERE id > ?1 LIMIT ?2)`
)

// scanFrom is how many of the index's candidates among n results make a
// search read the run's results in id order instead, and lackingFrom how
// many make it count those lacking the text; variables for tests.
var (
	scanFrom    = func(n int) int { return max(n/2, 1) }
	lackingFrom = func(n int) int { return max(n*3/4, 1) }
	// scanWhereUnindexed: tests read an unindexed run through the index too.
	scanWhereUnindexed = true
)

// sampleShare is the share of a run's range of ids (one in sampleShare)
// whose candidates are counted to choose: counting them all cost as much
// as a tenth of a search that met many.
const sampleShare = 16

// searchResponses finds text in a run's responses, through their index or
// by reading the run's results in id order. Meeting many results the index
// lacks, it starts the index's catch-up.
func (t *Tally) searchResponses(ctx context.Context, runID int64, text string, m *SampleMatches) error {
	var first, last int64
	var count int
	err := t.db.Read().QueryRowContext(ctx, `SELECT results_first, results_last, results_count FROM runs WHERE id = ?`, runID).
		Scan(&first, &last, &count)
	if err != nil {
		return fmt.Errorf("search responses: %w", err)
	}
	if count == 0 {
		return nil
	}
	if t.db.Postgres() {
		return t.searchResponsesPg(ctx, runID, first, last, count, text, m)
	}
	query := trigramQuery(text)
	pr, err := t.probeSearch(ctx, query, text, first, last)
	if err != nil {
		return fmt.Errorf("search responses: %w", err)
	}
	switch {
	case pr.holding >= lackingFrom(int(pr.span)):
		m.lacking = map[SampleKey]int{}
		err = t.readParts(ctx, first, last, m, func(lo, hi int64) (string, []any) {
			return qResponsesLacking, []any{runID, lo, hi, text}
		})
	case pr.candidates >= scanFrom(int(pr.span)) || !pr.useIndex:
		err = t.scanResponses(ctx, runID, first, last, text, m)
	case pr.candidates*sampleShare >= indexedInParts:
		err = t.readParts(ctx, first, last, m, func(lo, hi int64) (string, []any) {
			return qResponsesIndexed, []any{runID, query, lo, hi, text}
		})
	default:
		err = store.EachRow(ctx, t.db.Read(), qResponsesIndexed, []any{runID, query, first, last, text}, m.add)
	}
	if err != nil {
		return fmt.Errorf("search responses: %w", err)
	}
	if err := t.catchUpPast(ctx, pr.indexedThrough); err != nil {
		return fmt.Errorf("search responses: %w", err)
	}
	return nil
}

// searchProbe is what a look at a part of a run's results says of a
// search: the part's size, whether the index serves it, how many results
// there are candidates and how many hold the text, and how far the index
// has reached.
type searchProbe struct {
	span                int64
	useIndex            bool
	candidates, holding int
	indexedThrough      int64
}

// probeSearch looks at the candidates among the middle sixteenth of the
// run's ids, a part of its results taken as they came: the other runs'
// results there count as the run's. Where the index cannot look for the
// text, or has not reached that part (a run just finished: the index
// catches up once searched), they are the results there that hold it, and
// the run is scanned.
func (t *Tally) probeSearch(ctx context.Context, query, text string, first, last int64) (searchProbe, error) {
	var pr searchProbe
	pr.span = (last - first + 1 + sampleShare - 1) / sampleShare
	from := first + (last-first+1-pr.span)/2
	to := from + pr.span - 1
	if err := t.db.Read().QueryRowContext(ctx, `SELECT indexed_through FROM response_search_state`).Scan(&pr.indexedThrough); err != nil {
		return pr, err
	}
	pr.useIndex = query != "" && (pr.indexedThrough >= to || !scanWhereUnindexed)
	var err error
	if pr.useIndex {
		err = t.db.Read().QueryRowContext(ctx, qCandidates, query, from, to).Scan(&pr.candidates)
	} else {
		err = t.db.Read().QueryRowContext(ctx, qHolding, from, to, text).Scan(&pr.candidates)
	}
	if err != nil {
		return pr, err
	}
	// Most results there are candidates: how many hold the text? A text
	// whose every trigram most responses hold may be in none of them
	// ("explains the mechanism" where they say "explains the idea").
	pr.holding = pr.candidates
	if pr.useIndex && pr.candidates >= lackingFrom(int(pr.span)) {
		err = t.db.Read().QueryRowContext(ctx, qHolding, from, to, text).Scan(&pr.holding)
	}
	return pr, err
}

// indexedInParts is how many candidates (estimated) make a search read
// them through the index in parts at once, as a scan reads the run. A
// variable for tests.
var indexedInParts = 4000

// scanResponses reads the results with ids first to last (the run's range).
func (t *Tally) scanResponses(ctx context.Context, runID, first, last int64, text string, m *SampleMatches) error {
	return t.readParts(ctx, first, last, m, func(lo, hi int64) (string, []any) {
		return qResponsesScanned, []any{runID, lo, hi, text}
	})
}

// readParts runs the query of each part of the ids first to last — twice
// as many parts as there are processors, up to four, read at once: a
// part's reader waits on reads of pages from the OS meanwhile — and adds
// what each found to m.
func (t *Tally) readParts(ctx context.Context, first, last int64, m *SampleMatches, part func(lo, hi int64) (string, []any)) error {
	parts := int64(min(2*runtime.GOMAXPROCS(0), 4))
	found := make([]SampleMatches, parts)
	for p := range found {
		found[p].responses.first = m.responses.first
		if m.lacking != nil {
			found[p].lacking = map[SampleKey]int{}
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	size := (last - first + parts) / parts
	for p := range parts {
		lo, hi := first+p*size, min(first+(p+1)*size-1, last)
		g.Go(func() error {
			query, args := part(lo, hi)
			return store.EachRow(gctx, t.db.Read(), query, args, found[p].add)
		})
	}
	if err := g.Wait(); err != nil {
		return fmt.Errorf("search responses: %w", err)
	}
	for p := range found {
		m.merge(&found[p])
	}
	return nil
}

// maxTrigrams bounds the trigrams a query of the index asks for, spread
// along the text: each one asked for is a list of ids the index walks
// beside the others, and a text's candidates are few with a part of them
// (each is read and checked): a long text's twelve trigrams cost a third
// more CPU than four, and a common one (the "the" in every response) only
// lengthens the walk.
const maxTrigrams = 4

// trigramQuery is an FTS5 query of the index for the results whose
// response holds every trigram of text (a part of them when they are many,
// spread along it): the results whose response holds text are among those.
// It is "" when the index cannot answer: a text shorter than three
// characters, not UTF-8, or with a NUL.
func trigramQuery(text string) string {
	if !utf8.ValidString(text) || strings.ContainsRune(text, 0) {
		return ""
	}
	runes := []rune(text)
	n := len(runes) - 2
	if n < 1 {
		return ""
	}
	step := max(1, (n+maxTrigrams-1)/maxTrigrams)
	var q strings.Builder
	seen := map[string]bool{}
	for i := 0; i < n; i += step {
		t := string(runes[i : i+3])
		if seen[t] {
			continue
		}
		seen[t] = true
		if q.Len() > 0 {
			q.WriteString(" AND ")
		}
		q.WriteString(`"` + strings.ReplaceAll(t, `"`, `""`) + `"`)
	}
	return q.String()
}
