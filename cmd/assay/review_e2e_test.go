package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"assay/store"
	"assay/tally"
)

// TestBrowserReviewThroughALink: an expert opens a review link in a fresh
// browser, takes the random queue and reviews five scores with the keyboard
// (agree, and one override with a note); the owner's report then shows the
// coverage and agreement, and its summary with reviews applied moves the
// overridden metric's mean.
func TestBrowserReviewThroughALink(t *testing.T) {
	t.Parallel()
	dbPath, id := finishedRun(t, 3)
	const owner = "review-owner-token-0123"
	base := startServer(t, "--db", dbPath, "--token", owner)
	req, _ := http.NewRequest("POST", fmt.Sprintf("%s/api/runs/%d/review-links", base, id), strings.NewReader(`{"name": "Dr. Lee"}`))
	req.Header.Set("Authorization", "Bearer "+owner)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var link struct{ URL string }
	json.NewDecoder(resp.Body).Decode(&link)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated || link.URL == "" {
		t.Fatalf("review link: %d", resp.StatusCode)
	}

	ctx := newBrowser(t) // a fresh profile: no cookie, no token
	err = chromedp.Do(ctx,
		chromedp.Navigate(link.URL),
		chromedp.WaitVisible(chromedp.CSS("#samples")),
	)
	if err != nil {
		t.Fatalf("open the link: %v", err)
	}
	screenshot(t, ctx, "review-samples")
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS("#samples a.sample-link")),
		chromedp.WaitVisible(chromedp.CSS("#review-queue form")),
		chromedp.Click(chromedp.CSS("#review-queue button")), // the random queue
		chromedp.WaitVisible(chromedp.CSS("#next-in-queue")),
		chromedp.WaitVisible(chromedp.CSS("tr.score.reviewable")),
	)
	if err != nil {
		t.Fatalf("start the queue: %v", err)
	}
	rows, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("tr.score.reviewable")).map(r => r.id)`))
	if err != nil || len(rows) < 5 {
		t.Fatalf("%d reviewable scores (%v)", len(rows), err)
	}
	judged, _ := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`document.querySelector("#%s td.num").innerText`, rows[2])))
	override := "1"
	if strings.TrimSpace(judged) == "1" {
		override = "5"
	}
	press := func(row, keys, want string) {
		t.Helper()
		err := chromedp.Do(ctx,
			chromedp.KeyEvent(keys),
			chromedp.WaitVisible(chromedp.CSS("#"+row+" .verdict")),
		)
		if err != nil {
			t.Fatalf("%q on %s: %v", keys, row, err)
		}
		if got := textOf(t, ctx, "#"+row+" .verdict"); !strings.Contains(got, want) || !strings.Contains(got, "Dr. Lee") {
			t.Errorf("%s after %q: %q, want %q by Dr. Lee", row, keys, got, want)
		}
	}
	press(rows[0], "a", "agrees")
	press(rows[1], "a", "agrees")
	press(rows[2], override, "→ "+override)
	err = chromedp.Do(ctx,
		chromedp.KeyEvent("n"), // notes the score just decided
		chromedp.WaitReady(chromedp.CSS("#"+rows[2]+" .note:focus")),
		chromedp.KeyEvent("too generous"),
		chromedp.KeyEvent("\r"), // Enter saves the note with the verdict
		chromedp.WaitVisible(chromedp.CSS("#"+rows[2]+" .verdict .note")),
	)
	if err != nil {
		t.Fatalf("note: %v", err)
	}
	press(rows[3], "a", "agrees")
	press(rows[4], "a", "agrees")
	screenshot(t, ctx, "review-sample")
	if note := textOf(t, ctx, "#"+rows[2]+" .verdict .note"); note != "too generous" {
		t.Errorf("the override's note: %q", note)
	}

	db, err := tally.Open(context.Background(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	verdicts, _ := db.Reviews(context.Background(), id)
	if len(verdicts) != 5 {
		t.Fatalf("%d verdicts stored, want 5", len(verdicts))
	}
	var metric string
	for _, v := range verdicts {
		if v.Reviewer != "Dr. Lee" {
			t.Errorf("a verdict by %q", v.Reviewer)
		}
		if v.Verdict == store.VerdictOverride {
			metric = v.Metric
		}
	}
	// ] leads to the next sample in the queue.
	before, _ := chromedp.Run(ctx, chromedp.Location())
	if err := chromedp.Do(ctx, chromedp.KeyEvent("]"), chromedp.WaitVisible(chromedp.CSS("#review-queue"))); err != nil {
		t.Fatal(err)
	}
	for after := before; after == before; after, _ = chromedp.Run(ctx, chromedp.Location()) {
	}
	if after, _ := chromedp.Run(ctx, chromedp.Location()); !strings.Contains(after, "queue=random") {
		t.Errorf("] led to %s", after)
	}

	// The owner's report.
	get := func(path string) string {
		req, _ := http.NewRequest("GET", base+path, nil)
		req.Header.Set("Authorization", "Bearer "+owner)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		return b.String()
	}
	judgedPage, reviewedPage := get(fmt.Sprintf("/runs/%d", id)), get(fmt.Sprintf("/runs/%d?view=reviewed", id))
	if !strings.Contains(judgedPage, `id="agreement"`) || !strings.Contains(judgedPage, "5 verdicts on 5 scores") {
		t.Error("the owner's report shows no agreement for the 5 verdicts")
	}
	if judgedPage == reviewedPage || !strings.Contains(reviewedPage, "1 override replace") {
		t.Errorf("the summary with reviews applied (%s overridden) does not differ", metric)
	}
	owner2 := newBrowser(t)
	err = chromedp.Do(owner2,
		chromedp.Navigate(fmt.Sprintf("%s/runs/%d", base, id)),
		chromedp.WaitVisible(chromedp.CSS("#token")),
		chromedp.SendKeys(chromedp.CSS("#token"), owner),
		chromedp.Click(chromedp.CSS(`form[action="/login"] button`)),
		chromedp.WaitVisible(chromedp.CSS("#agreement")),
		chromedp.Click(chromedp.CSS("#view-reviewed")),
		chromedp.WaitVisible(chromedp.CSS("#view-reviewed.active")),
	)
	if err != nil {
		t.Fatalf("owner's report: %v", err)
	}
	screenshot(t, owner2, "review-report")
}

// On a server that asks no token, a browser that has never reviewed is
// asked its name once, at the top of the sample page: the first key of a
// verdict leads there, and after the name three key presses give three
// verdicts under it, and ] still opens the next sample.
func TestBrowserReviewKeysAskTheNameOnce(t *testing.T) {
	t.Parallel()
	dbPath, id := finishedRun(t, 3)
	base := startServer(t, "--db", dbPath)
	ctx := newBrowser(t) // no reviewer's name kept
	err := chromedp.Do(ctx,
		chromedp.Navigate(fmt.Sprintf("%s/runs/%d/samples", base, id)),
		chromedp.WaitVisible(chromedp.CSS("#samples a.sample-link")),
		chromedp.Click(chromedp.CSS("#samples a.sample-link")),
		chromedp.WaitVisible(chromedp.CSS("#reviewer-name")),
		chromedp.WaitVisible(chromedp.CSS("tr.score.reviewable")),
	)
	if err != nil {
		t.Fatalf("open a sample: %v", err)
	}
	if n, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("input.reviewer-name, input[name=reviewer]").length`)); n != 0 {
		t.Errorf("%d name boxes in the rows: the name is asked once, at the top", n)
	}
	err = chromedp.Do(ctx,
		chromedp.KeyEvent("a"), // asks the name
		chromedp.WaitReady(chromedp.CSS("#reviewer-name:focus")),
		chromedp.KeyEvent("Ada"),
		chromedp.KeyEvent("\r"),
	)
	if err != nil {
		t.Fatalf("the name: %v", err)
	}
	rows, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("tr.score.reviewable")).map(r => r.id)`))
	if err != nil || len(rows) < 3 {
		t.Fatalf("%d reviewable scores (%v)", len(rows), err)
	}
	for i, row := range rows[:3] {
		if err := chromedp.Do(ctx, chromedp.KeyEvent("a"), chromedp.WaitVisible(chromedp.CSS("#"+row+" .verdict"))); err != nil {
			t.Fatalf("key %d: %v", i+1, err)
		}
		if got := textOf(t, ctx, "#"+row+" .verdict"); !strings.Contains(got, "agrees") || !strings.Contains(got, "Ada") {
			t.Errorf("%s: %q, want Ada's agreement", row, got)
		}
	}
	screenshot(t, ctx, "review-name-once")
	db, err := tally.Open(context.Background(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if verdicts, _ := db.Reviews(context.Background(), id); len(verdicts) != 3 || verdicts[0].Reviewer != "Ada" {
		t.Errorf("verdicts stored: %+v, want three by Ada", verdicts)
	}
	before, _ := chromedp.Run(ctx, chromedp.Location())
	if err := chromedp.Do(ctx, chromedp.KeyEvent("]"), chromedp.WaitVisible(chromedp.CSS("#review-queue"))); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Poll[chromedp.Void](fmt.Sprintf(`location.href !== %q`, before))); err != nil {
		t.Errorf("] did not open the next sample: %v", err)
	}
	if n, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#reviewer-name").length`)); n != 0 {
		t.Error("the next sample asks the name again")
	}
}

// A reviewer's exact keys record exactly the verdicts they gave: a agrees
// and moves the focus on, saying so; j moves it by hand; 4 overrides the
// focused score; n notes the score just decided, and Enter in the note saves
// the note alone, never a verdict; u takes the last verdict back.
func TestBrowserReviewKeysRecordTheVerdictsGiven(t *testing.T) {
	t.Parallel()
	dbPath, id := finishedRun(t, 3)
	base := startServer(t, "--db", dbPath)
	ctx := newBrowser(t)
	err := chromedp.Do(ctx,
		chromedp.Navigate(fmt.Sprintf("%s/runs/%d/samples", base, id)),
		chromedp.WaitVisible(chromedp.CSS("#samples a.sample-link")),
		chromedp.Click(chromedp.CSS("#samples a.sample-link")),
		chromedp.WaitVisible(chromedp.CSS("#reviewer-name")),
		chromedp.SendKeys(chromedp.CSS("#reviewer-name"), "Ada\r"),
		chromedp.WaitVisible(chromedp.CSS("tr.score.reviewable.current")),
	)
	if err != nil {
		t.Fatalf("open a sample: %v", err)
	}
	rows, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("tr.score.reviewable")).map(r => r.id)`))
	if err != nil || len(rows) < 4 {
		t.Fatalf("%d reviewable scores (%v)", len(rows), err)
	}
	metric := func(row string) string { return textOf(t, ctx, "#"+row+" td") }
	said := func(want string) {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.Poll[chromedp.Void](fmt.Sprintf(`document.getElementById("review-said").textContent.includes(%q)`, want))); err != nil {
			t.Fatalf("the bar never said %q: it says %q", want, textOf(t, ctx, "#review-said"))
		}
	}
	focused := func(row string) {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS("#"+row+".current"))); err != nil {
			t.Fatalf("%s is not the outlined score: %v", row, err)
		}
	}
	keys := func(k string) {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.KeyEvent(k)); err != nil {
			t.Fatal(err)
		}
	}

	keys("a")
	said("Recorded ✓ agrees for " + metric(rows[0]) + ". Next: " + metric(rows[1]))
	focused(rows[1])
	keys("j")
	focused(rows[2])
	keys("4")
	said("Recorded → 4 for " + metric(rows[2]) + ". Next: " + metric(rows[3]))
	focused(rows[3])
	keys("n")
	said("Note for " + metric(rows[2]))
	if err := chromedp.Do(ctx, chromedp.WaitReady(chromedp.CSS("#"+rows[2]+" .note:focus"))); err != nil {
		t.Fatalf("n did not open the note of the score just decided: %v", err)
	}
	keys("judge was too kind")
	keys("\r")
	said("Note saved for " + metric(rows[2]))
	screenshot(t, ctx, "review-keys-note")

	db, err := tally.Open(context.Background(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	stored := func() map[string]store.Review {
		vs, err := db.Reviews(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]store.Review{}
		for _, v := range vs {
			out[fmt.Sprintf("score-%d", v.ScoreID)] = v
		}
		return out
	}
	got := stored()
	if v := got[rows[0]]; len(got) != 2 || v.Verdict != store.VerdictAgree || v.Reviewer != "Ada" {
		t.Errorf("after a, j, 4, n, a note and Enter: %d verdicts, %s's %+v; want %s agreed and %s overridden", len(got), rows[0], v, rows[0], rows[2])
	}
	if v := got[rows[2]]; v.Verdict != store.VerdictOverride || v.Value != 4 || v.Note != "judge was too kind" {
		t.Errorf("%s: %+v, want an override of 4 with the note", rows[2], v)
	}
	if _, ok := got[rows[1]]; ok {
		t.Errorf("%s, skipped with j, has a verdict", rows[1])
	}
	if _, ok := got[rows[3]]; ok {
		t.Errorf("%s, focused while the note was written, has a verdict nobody gave", rows[3])
	}

	keys("u")
	said("Undone: " + metric(rows[2]) + " has no verdict of yours")
	focused(rows[2])
	if got := stored(); len(got) != 1 || got[rows[0]].Verdict != store.VerdictAgree {
		t.Errorf("after u: %+v, want %s's agreement alone", got, rows[0])
	}
	screenshot(t, ctx, "review-keys-undone")
}
