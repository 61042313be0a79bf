package readmodel

import (
	"testing"
	"time"

	"assay/store"
	"assay/tally"
)

// A large running run's report is kept for a few times its computation
// time while results come in; a change of status or verdicts, or a small
// run's new result, computes it again at once.
func TestRunningReportsRefreshAsOftenAsTheyAreCheap(t *testing.T) {
	c := newReportCache(4, keptResults)
	key := cacheKey{run: 1}
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	running := reportVersion{created: "c", status: store.RunRunning, results: tally.ResultsVersion{Count: 20000, Last: 20000}}
	slow := &Viewed{Version: "slow"}
	c.put(key, running, slow, t0, time.Second) // a report that took a second

	later := running
	later.results = tally.ResultsVersion{Count: 20080, Last: 20080}
	if r, ok := c.get(key, later, t0.Add(3*time.Second)); !ok || r != slow {
		t.Error("a report computed 3 s ago in 1 s was computed again for new results")
	}
	if _, ok := c.get(key, later, t0.Add(4*time.Second)); ok {
		t.Error("a report computed 4 s ago in 1 s was kept for new results")
	}
	ended := later
	ended.status = store.RunCompleted
	if _, ok := c.get(key, ended, t0.Add(time.Second)); ok {
		t.Error("the report of a run that has ended was not computed again at once")
	}
	reviewed := later
	reviewed.reviews = 1
	if _, ok := c.get(key, reviewed, t0.Add(time.Second)); ok {
		t.Error("a new verdict did not compute the report again at once")
	}

	fast := &Viewed{Version: "fast"}
	c.put(key, running, fast, t0, 5*time.Millisecond)
	if _, ok := c.get(key, later, t0.Add(50*time.Millisecond)); ok {
		t.Error("a report computed in 5 ms was kept 50 ms for new results")
	}
	if r, ok := c.get(key, running, t0.Add(time.Hour)); !ok || r != fast {
		t.Error("an unchanged run's report was computed again")
	}

	small := reportVersion{created: "s", status: store.RunRunning, results: tally.ResultsVersion{Count: 100, Last: 100}}
	c.put(cacheKey{run: 2}, small, slow, t0, time.Second)
	small.results = tally.ResultsVersion{Count: 101, Last: 101}
	if _, ok := c.get(cacheKey{run: 2}, small, t0.Add(time.Millisecond)); ok {
		t.Error("a small run's report was kept for a new result")
	}
}

// Reports are kept while their runs' results stay within the budget: a
// third large run's report forgets the one read longest ago, and a run
// larger than the budget alone is still kept.
func TestReportsKeptWithinTheirResultsBudget(t *testing.T) {
	c := newReportCache(8, 300000)
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	version := func(results int) reportVersion {
		return reportVersion{created: "c", status: store.RunCompleted, results: tally.ResultsVersion{Count: results, Last: int64(results)}}
	}
	kept := func(run int64, results int) bool {
		_, ok := c.get(cacheKey{run: run}, version(results), t0)
		return ok
	}
	c.put(cacheKey{run: 1}, version(150000), &Viewed{}, t0, time.Second)
	c.put(cacheKey{run: 2}, version(150000), &Viewed{}, t0, time.Second)
	if !kept(1, 150000) { // read again: run 2's is now the one read longest ago
		t.Fatal("two reports of 150,000 results each: the first was forgotten")
	}
	c.put(cacheKey{run: 3}, version(100), &Viewed{}, t0, time.Second)
	if kept(2, 150000) || !kept(1, 150000) || !kept(3, 100) {
		t.Errorf("over the budget, the report read longest ago should go alone: runs 1 %v, 2 %v, 3 %v",
			kept(1, 150000), kept(2, 150000), kept(3, 100))
	}
	c.put(cacheKey{run: 4}, version(500000), &Viewed{}, t0, time.Second)
	if !kept(4, 500000) || len(c.entries) != 1 {
		t.Errorf("a report larger than the budget: kept %v, with %d others", kept(4, 500000), len(c.entries)-1)
	}
	for run := int64(10); run < 20; run++ {
		c.put(cacheKey{run: run}, version(10), &Viewed{}, t0, time.Second)
	}
	if len(c.entries) != 8 {
		t.Errorf("%d small reports kept, want 8", len(c.entries))
	}
}
