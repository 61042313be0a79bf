package store_test

import (
	"testing"
	"time"

	"assay/store"
)

// A session used every 10 s lives on under an idle limit of 20 s: its last
// use is noted often enough for the limit, not only once a minute.
func TestAShortIdleLimitKeepsActiveSessions(t *testing.T) {
	db := openTestDB(t)
	start := time.Now().UTC()
	now := start
	db.SetClock(func() time.Time { return now })
	lim := store.SessionLimits{Idle: 20 * time.Second, Max: time.Hour}
	id, err := db.CreateSession(t.Context(), &store.Session{Name: "owner", Role: store.RoleOwner}, "h")
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 12; i++ {
		now = start.Add(time.Duration(i) * 10 * time.Second)
		if _, err := db.SessionByID(t.Context(), id, "h", lim); err != nil {
			t.Fatalf("after %s of use every 10 s: %v", now.Sub(start), err)
		}
	}
	now = now.Add(25 * time.Second)
	if _, err := db.SessionByID(t.Context(), id, "h", lim); err == nil {
		t.Error("a session idle for 25 s under a 20 s limit is alive")
	}
}
