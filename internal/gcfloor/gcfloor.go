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
// is at least floor bytes while the live heap is under half of that, and
// twice the live heap above, as with GOGC=100. Without holders, GOGC is
// 100 again. It does nothing when GOGC or GOMEMLIMIT is set in the
// environment: the user's setting stands.
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

// percent is the GOGC whose goal is floor for a live heap under half of
// it, and 100 above.
func percent(live, floor uint64) int {
	switch {
	case live < minHeap: // the goal is then GOGC/100 × minHeap
		return max(100, int(floor*100/minHeap))
	case live*2 < floor: // live × (1 + GOGC/100)
		return int(floor*100/live) - 100
	}
	return 100
}
