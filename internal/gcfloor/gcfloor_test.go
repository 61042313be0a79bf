package gcfloor

import (
	"os"
	"runtime"
	"runtime/metrics"
	"testing"
)

func TestPercent(t *testing.T) {
	for _, c := range []struct {
		live, floor uint64
		want        int
	}{
		{1 << 20, 16 << 20, 400},  // under the runtime's 4 MB: 400 × 4 MB / 100 = 16 MB
		{4 << 20, 16 << 20, 300},  // 4 MB × (1 + 3) = 16 MB
		{6 << 20, 16 << 20, 200},  // 6 MB × 3 = 18 MB, above the floor: room for twice the live heap
		{8 << 20, 16 << 20, 200},  // 8 MB × 3 = 24 MB
		{24 << 20, 16 << 20, 133}, // room for twice the live heap is more than twice the floor: 32 MB of room
		{32 << 20, 16 << 20, 100}, // twice the floor is the live heap: as GOGC=100
		{80 << 20, 16 << 20, 100}, // far above: as GOGC=100
		{1 << 20, 2 << 20, 100},   // a floor under the runtime's own changes nothing
	} {
		if got := percent(c.live, c.floor); got != c.want {
			t.Errorf("percent(%d MB live, %d MB floor) = %d, want %d", c.live>>20, c.floor>>20, got, c.want)
		}
	}
}

// TestGoal checks the runtime's heap goal after collections: the floor
// while little is alive, twice the live heap while much is, and the
// runtime's own once the floor is released.
func TestGoal(t *testing.T) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("GOGC or GOMEMLIMIT is set: the floor leaves them alone")
	}
	const floor = 64 << 20
	release := Hold(floor)
	goal := func() uint64 {
		s := []metrics.Sample{{Name: "/gc/heap/goal:bytes"}}
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	// The finalizer that sets GOGC runs after a collection, in a goroutine
	// of its own: collect until the goal shows it, or fail.
	until := func(what string, ok func(uint64) bool) {
		t.Helper()
		for range 1000 {
			if ok(goal()) {
				return
			}
			runtime.GC()
			runtime.Gosched()
		}
		t.Fatalf("%s: the heap's goal stayed %d MB", what, goal()>>20)
	}
	until("little alive", func(g uint64) bool { return g >= floor })
	kept := make([][]byte, 0, 200)
	for range 200 { // 200 MB alive: the goal follows the live heap
		kept = append(kept, make([]byte, 1<<20))
	}
	until("200 MB alive", func(g uint64) bool { return g >= 400<<20 && g <= 440<<20 })
	runtime.KeepAlive(kept)
	kept = nil
	until("little alive again", func(g uint64) bool { return g >= floor && g <= floor+floor/10 })
	release()
	until("released", func(g uint64) bool { return g < floor/4 })
}
