package runner

import (
	"slices"
	"testing"
	"time"
)

// A batch just sent is looked at after a second, then twice as long each
// time up to batch.poll: one the provider ends in two seconds is read after
// three, not after the 30 s of the first poll (a batch kept from before is
// looked at at once, then the same).
func TestBatchesAreLookedAtSoonThenLessOften(t *testing.T) {
	var waits []time.Duration
	for w := min(firstPoll, 30*time.Second); len(waits) < 7; w = nextPoll(w, 30*time.Second) {
		waits = append(waits, w)
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 30 * time.Second, 30 * time.Second}
	if !slices.Equal(waits, want) {
		t.Errorf("the waits between looks: %v, want %v", waits, want)
	}
	if got := nextPoll(0, 30*time.Second); got != time.Second {
		t.Errorf("after the look at once at a restart, the next comes after %s, want 1s", got)
	}
	if got := nextPoll(time.Second, 10*time.Millisecond); got != 10*time.Millisecond {
		t.Errorf("a poll of 10ms is the most: %s", got)
	}
}
