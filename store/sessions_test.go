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

// A sign-in code signs in once, within 15 minutes, and whoever it was made
// for; a code unknown, used or late signs nobody in.
func TestASigninCodeSignsInOnceWithinItsTime(t *testing.T) {
	db := openTestDB(t)
	start := time.Now().UTC()
	now := start
	db.SetClock(func() time.Time { return now })
	first, err := db.CreateSigninCode(t.Context(), "owner", store.RoleOwner)
	if err != nil {
		t.Fatal(err)
	}
	late, _ := db.CreateSigninCode(t.Context(), "owner", store.RoleOwner)
	now = start.Add(14 * time.Minute)
	c, err := db.UseSigninCode(t.Context(), first)
	if err != nil || c.Name != "owner" || c.Role != store.RoleOwner {
		t.Fatalf("a code used after 14 minutes: %+v, %v", c, err)
	}
	if _, err := db.UseSigninCode(t.Context(), first); err == nil {
		t.Error("a code signed in twice")
	}
	now = start.Add(16 * time.Minute)
	if _, err := db.UseSigninCode(t.Context(), late); err == nil {
		t.Error("a code signed in after 16 minutes")
	}
	if _, err := db.UseSigninCode(t.Context(), "not-a-code"); err == nil {
		t.Error("an unknown code signed in")
	}
}
