// Package gcfloor keeps the heap's goal from falling under a floor while
// runs execute, so that a process keeping little alive (a run's engine
// keeps about 1 MB) does not collect every few megabytes it allocates,
// while one keeping much (a server folding a large report) collects as
// with GOGC=100.
package gcfloor

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// Floor is the heap goal assay keeps at least while runs execute. At 0 ms
// latency the engine collected about 50 times in a run of 2,000 tasks (4
// MB apart), 14 times with it; its CPU per call was about a tenth less
// (1.39–1.48 → 1.25–1.30 times the fake server's beside it, four
// alternated runs each) and its peak RSS 31 → 35 MiB. 16 MB was no better
// (1.29–1.37 against 1.26–1.29 for 8, alternated) at 43 MiB, 32 MB worse
// (0.174–0.183 ms per call against 0.147–0.156 for 16): a larger heap
// touches fresh pages. Held for the whole process, 16 MB raised the peak
// of `assay run` importing 100,000 questions from 88 to 98 MiB (the
// target is 100).
const Floor = 8 << 20

// minHeap is the runtime's least heap goal at GOGC=100; it grows with GOGC.
const minHeap = 4 << 20

var (
	once  sync.Once
	mu    sync.Mutex
	held  int    // how many holders the floor has
	floor uint64 // the highest floor they asked for
)

// Hold keeps a floor under the heap's goal until release is called: after
// each collection, the GOGC the next one comes at is set so that its goal
// is at least floor bytes, with room above the live heap as percent says.
// Without holders, GOGC is 100 again. It does nothing when GOGC or
// GOMEMLIMIT is set in the environment: the user's setting stands.
func Hold(f uint64) (release func()) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	once.Do(start)
	mu.Lock()
	held++
	floor = max(floor, f)
	mu.Unlock()
	var one sync.Once
	return func() {
		one.Do(func() {
			mu.Lock()
			defer mu.Unlock()
			if held--; held == 0 {
				floor = 0
				debug.SetGCPercent(100)
			}
		})
	}
}

// start sets GOGC after each collection from then on.
func start() {
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	var arm func()
	arm = func() {
		// A finalizer runs once its object is found unreachable, after a
		// collection: each arms the next.
		runtime.SetFinalizer(new([16]byte), func(*[16]byte) {
			mu.Lock()
			if held > 0 {
				metrics.Read(live)
				debug.SetGCPercent(percent(live[0].Value.Uint64(), floor))
			}
			mu.Unlock()
			arm()
		})
	}
	arm()
}

// percent is the GOGC whose goal is the floor while little is alive, and
// above it room for twice the live heap (as GOGC=200) while that room is
// at most twice the floor, and for the live heap once (GOGC=100) beyond.
// At concurrency 200 the engine keeps about 8 MB alive (a connection's
// buffers, a worker's task): collecting at 16 MB rather than 24 cost it
// 4% more CPU per call (0.191–0.212 against 0.185–0.192 ms, medians of
// three runs, alternated), for 8 MB more heap at most; a process
// keeping much (a server folding a large report) still collects as with
// GOGC=100.
func percent(live, floor uint64) int {
	room := max(live, min(2*live, 2*floor))
	want := max(floor, live+room)
	g := want * 100 / minHeap // the runtime's least goal: minHeap × GOGC/100
	if live > 0 {
		g = min(g, (want-live)*100/live) // live × (1 + GOGC/100)
	}
	return max(100, int(g))
}
