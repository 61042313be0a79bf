package readmodel

import (
	"context"
	"fmt"
	"hash/fnv"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"assay/report"
	"assay/store"
	"assay/tally"
)

// reportCache keeps the reports of the runs Viewed last. A report is computed
// from every score of its run (read from its per-sample aggregates), which
// takes a second at 150,000 results with its bootstraps; results and scores
// are only ever added, so a run whose status and results are unchanged has
// the same report.
type reportCache struct {
	mu      sync.Mutex
	max     int // reports kept
	budget  int // their runs' results, together (keptResults)
	tick    uint64
	entries map[cacheKey]*cachedReport
}

// keptResults bounds the results of the runs whose reports, and whose
// Samples tables, are kept, each kind together: the report of a run of
// 150,000 results holds about 20 MB, its table 10 MB, and a server that
// kept eight of each after its user read eight such runs held 250 MB
// more than after one. The last one kept stays, whatever its size.
const keptResults = 300000

// cacheKey is a run's report in one view.
type cacheKey struct {
	run   int64
	view  report.View
	judge string // one panel judge's report, or "" for the panel's
}

type cachedReport struct {
	version reportVersion // its results weigh it against the budget
	r       *Viewed
	used    uint64
	built   time.Time     // when its computation began
	took    time.Duration // how long it took
}

// runningRefresh is how many times its own computation time the report of
// a large running run (runningLarge results or more) is kept after it was
// computed, however many results came since: a report that takes a second
// to compute is not computed on every poll of a live page. A smaller run's
// report is computed again for every new result.
const (
	runningRefresh = 4
	runningLarge   = 10000
)

// reportVersion is what changes when a run's report may change. The run's
// creation time tells a run from a later one that got a deleted run's id.
type reportVersion struct {
	created   string
	status    store.RunStatus
	finished  string
	results   tally.ResultsVersion
	reviews   int   // reviews given
	reviewSeq int64 // the last given (store.Review.Seq)
}

func newReportCache(max, budget int) *reportCache {
	return &reportCache{max: max, budget: budget, entries: map[cacheKey]*cachedReport{}}
}

// get returns the report of that version, or a large running run's report
// of an earlier version computed less than runningRefresh × its computation
// time ago (the status, the reviews and everything but the results the same).
func (c *reportCache) get(key cacheKey, version reportVersion, now time.Time) (*Viewed, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok {
		return nil, false
	}
	if e.version != version {
		earlier := e.version
		earlier.results.Count, earlier.results.Last = version.results.Count, version.results.Last
		if version.status != store.RunRunning || earlier != version || e.version.results.Count < runningLarge ||
			now.Sub(e.built) >= runningRefresh*e.took {
			return nil, false
		}
	}
	c.tick++
	e.used = c.tick
	return e.r, true
}

// put keeps r, computed from built for took, forgetting the reports used
// longest ago while more are kept than max, or of more results than the
// budget.
// It returns how many results the reports forgotten held.
func (c *reportCache) put(key cacheKey, version reportVersion, r *Viewed, built time.Time, took time.Duration) (forgotten int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tick++
	c.entries[key] = &cachedReport{version: version, r: r, used: c.tick, built: built, took: took}
	return forget(c.entries, key, c.max, c.budget, func(e *cachedReport) (int, uint64) { return e.version.results.Count, e.used })
}

// forget removes from m the entries used longest ago, never keep, while
// it holds more than max or their weights (their runs' results) add up to
// more than budget, and returns the weight forgotten: once a large run's
// is, the memory it held goes back to the system (releaseMemory).
func forget[K comparable, E any](m map[K]E, keep K, max, budget int, weigh func(E) (weight int, used uint64)) (forgotten int) {
	for len(m) > 1 {
		total := 0
		var oldest K
		var oldestUsed uint64
		oldestWeight, found := 0, false
		for k, e := range m {
			w, used := weigh(e)
			total += w
			if k != keep && (!found || used < oldestUsed) {
				oldest, oldestUsed, oldestWeight, found = k, used, w, true
			}
		}
		if len(m) <= max && total <= budget {
			return
		}
		forgotten += oldestWeight
		delete(m, oldest)
	}
	return forgotten
}

// releaseFrom is how many results a forgotten report or table must have
// held for its memory to go back to the system at once: the process's
// heap, grown to hold it, stayed as large until the runtime returned it
// little by little. Reading four runs of 150,000 results one after
// another, the server's RSS after the third was 224 MB, 114 MB with it.
const releaseFrom = 10000

// releaseMemory returns freed memory to the system in the background once
// a large run's report or table is forgotten (a collection, beside the
// requests).
func (m *Model) releaseMemory(forgotten int) {
	if forgotten < releaseFrom || !m.releasing.CompareAndSwap(false, true) {
		return
	}
	m.background(func(context.Context) {
		defer m.releasing.Store(false)
		debug.FreeOSMemory()
	})
}

// Report returns the report of the scope's run, computed again only when
// the run has changed. The report is shared between requests: nothing may
// change it, and each request gets its own copy of the scope.
func (m *Model) Report(ctx context.Context, sc *Scope) (*Viewed, error) {
	version, err := m.reportVersion(ctx, sc)
	if err != nil {
		return nil, err
	}
	key := cacheKey{sc.Run.ID, sc.View, sc.Judge}
	start := time.Now()
	if r, ok := m.reports.get(key, version, start); ok {
		return r.In(sc), nil
	}
	held, err := m.reviewsAt(ctx, sc.Run.ID, version.reviews, version.reviewSeq)
	if err != nil {
		return nil, err
	}
	// The reviews the report is computed with: those held, given at or
	// after the version read.
	version.reviews, version.reviewSeq = held.N, held.Last
	var r *Viewed
	built, took := start, time.Duration(0)
	if earlier := m.reports.withOtherReviews(key, version); earlier != nil {
		// Its scores are the earlier report's: it is kept as if computed
		// when and as long as that one was.
		r = &Viewed{Report: earlier.r.WithReviews(sc.View, held.List), Scope: sc}
		built, took = earlier.built, earlier.took
	} else {
		if r, err = BuildReport(ctx, m.db, sc, held.List); err != nil {
			return nil, err
		}
		took = time.Since(start)
	}
	r.Fields = &m.sliceFields
	r.Version = version.token()
	m.releaseMemory(m.reports.put(key, version, r, built, took))
	return r, nil
}

// withOtherReviews returns a report kept of the same scores — the
// version but for its reviews, in the key's view or the other — or nil.
func (c *reportCache) withOtherReviews(key cacheKey, version reportVersion) *cachedReport {
	c.mu.Lock()
	defer c.mu.Unlock()
	other := key
	other.view = report.Reviewed
	if key.view == report.Reviewed {
		other.view = report.AsJudged
	}
	for _, k := range []cacheKey{key, other} {
		e, ok := c.entries[k]
		if !ok {
			continue
		}
		earlier := e.version
		earlier.reviews, earlier.reviewSeq = version.reviews, version.reviewSeq
		if earlier == version {
			copied := *e
			return &copied
		}
	}
	return nil
}

// reportVersion reads what the scope's report depends on: two small queries.
func (m *Model) reportVersion(ctx context.Context, sc *Scope) (reportVersion, error) {
	results, err := tally.Of(m.db).ResultsVersion(ctx, sc.Run.ID)
	if err != nil {
		return reportVersion{}, err
	}
	nv, lastReview, err := m.db.ReviewsVersion(ctx, sc.Run.ID)
	if err != nil {
		return reportVersion{}, err
	}
	version := reportVersion{created: sc.Run.CreatedAt.String(), status: sc.Run.Status, results: results,
		reviews: nv, reviewSeq: lastReview}
	if sc.Run.FinishedAt != nil {
		version.finished = sc.Run.FinishedAt.String()
	}
	return version, nil
}

// token names a version in a URL: a page that refreshes its report sends
// the token of the one it shows, and is told when nothing changed.
func (v reportVersion) token() string {
	h := fnv.New64a()
	fmt.Fprintf(h, "%+v", v)
	return strconv.FormatUint(h.Sum64(), 36)
}

// sampleCache keeps the samples tables of the runs browsed last: a table
// folds every sample's scores of its run (0.4 s at 150,000 results), and a
// run whose results are unchanged has the same table.
type sampleCache struct {
	mu      sync.Mutex
	budget  int // the kept tables' results, together (keptResults)
	tick    uint64
	entries map[int64]cachedSamples
	// building makes the requests for a table being made wait for it,
	// not make it again.
	building singleflight.Group
}

type cachedSamples struct {
	version tally.ResultsVersion // its Count weighs it against keptResults
	table   *report.SampleTable
	used    uint64
}

// sampleCacheSize bounds the tables kept (and keptResults their runs' results).
const sampleCacheSize = 8

// Samples returns a run's samples table, from the cache when the run's
// results are unchanged. The table is shared: callers only read it.
func (m *Model) Samples(ctx context.Context, sc *Scope) (*report.SampleTable, error) {
	version, err := tally.Of(m.db).ResultsVersion(ctx, sc.Run.ID)
	if err != nil {
		return nil, err
	}
	c := &m.sampleTables
	c.mu.Lock()
	e, ok := c.entries[sc.Run.ID]
	if ok && e.version == version {
		c.tick++
		e.used = c.tick
		c.entries[sc.Run.ID] = e
		c.mu.Unlock()
		return e.table, nil
	}
	c.mu.Unlock()
	// Made to the end even if the request that started it goes (others
	// may be waiting for it), unless the server closes.
	ctx = m.base
	t, err, _ := c.building.Do(fmt.Sprint(sc.Run.ID, "/", version.Count, "/", version.Last, "/", version.Cleared), func() (any, error) {
		t, err := report.LoadSamples(ctx, m.db, sc.Run.ID, sc.Run.Config.Evaluators)
		if err != nil {
			return nil, err
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.entries == nil {
			c.entries = map[int64]cachedSamples{}
		}
		c.tick++
		c.entries[sc.Run.ID] = cachedSamples{version, t, c.tick}
		forgotten := forget(c.entries, sc.Run.ID, sampleCacheSize, c.budget, func(e cachedSamples) (int, uint64) { return e.version.Count, e.used })
		m.releaseMemory(forgotten)
		return t, nil
	})
	if err != nil {
		return nil, err
	}
	return t.(*report.SampleTable), nil
}

// WarmSamples makes a finished run's samples table in the background
// once its report is sent, unless it is kept already: a person reading
// the report opens the table next, and its first request made it, ten
// times slower than a kept one (a search typed into it waits for nothing
// more).
func (m *Model) WarmSamples(sc *Scope) {
	if !sc.Run.Status.Finished() {
		return // its table changes with each result
	}
	m.background(func(ctx context.Context) {
		if _, err := m.Samples(ctx, sc); err != nil {
			m.log.Debug("samples table made ahead", "run_id", sc.Run.ID, "err", err)
		}
	})
}

// searchKey is a search of a run's samples as its results stand.
type searchKey struct {
	run     int64
	version tally.ResultsVersion
	text    string
}

// Search finds text in a run's samples and responses, from the cache when
// the run's results are unchanged since the same search.
func (m *Model) Search(ctx context.Context, sc *Scope, text string) (*tally.SampleMatches, error) {
	version, err := tally.Of(m.db).ResultsVersion(ctx, sc.Run.ID)
	if err != nil {
		return nil, err
	}
	key := searchKey{sc.Run.ID, version, text}
	if found, ok := m.searches.Get(key); ok {
		return found, nil
	}
	found, err := tally.Of(m.db).SearchSamples(ctx, sc.Run.ID, sc.Run.DatasetID, text)
	if err != nil {
		return nil, err
	}
	m.searches.Put(key, found)
	return found, nil
}

// VersionToken names the version of the scope's report as it stands: a
// page that refreshes its report sends the token of the one it shows.
func (m *Model) VersionToken(ctx context.Context, sc *Scope) (string, error) {
	v, err := m.reportVersion(ctx, sc)
	if err != nil {
		return "", err
	}
	return v.token(), nil
}

// Settle waits for the background work under way: a benchmark's fresh
// server would otherwise take the machine's cores from the next one's
// first request.
func (m *Model) Settle() { m.work.Wait() }

// TableKept says whether a run's samples table is kept.
func (m *Model) TableKept(runID int64) bool {
	c := &m.sampleTables
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.entries[runID]
	return ok
}

// ReportsKept is how many reports are kept.
func (m *Model) ReportsKept() int {
	m.reports.mu.Lock()
	defer m.reports.mu.Unlock()
	return len(m.reports.entries)
}

// KeepTables bounds the samples tables kept by their runs' results
// together (keptResults unless set).
func (m *Model) KeepTables(results int) {
	m.sampleTables.mu.Lock()
	defer m.sampleTables.mu.Unlock()
	m.sampleTables.budget = results
}
