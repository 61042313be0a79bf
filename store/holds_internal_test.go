package store

import (
	"assay/internal/pgtest"
	"context"
	"math/rand/v2"
	"strings"
	"testing"
)

// likePattern is the LIKE pattern (ESCAPE '\') that finds text anywhere.
func likePattern(text string) string {
	return "%" + strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(text) + "%"
}

// holds(x, text) answers as x LIKE '%text%' does, over texts and strings
// made of letters of both cases, letters beyond ASCII whose UTF-8 bytes
// differ in one bit as ASCII cases do, LIKE's wildcards and escape, and
// spaces; and gives NULL for NULL as LIKE does.
func TestHoldsAnswersAsLike(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, pgtest.Database(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	pieces := []string{"e", "E", "x", "X", "q", "Q", " ", "é", "É", "ä", "Ä", "%", "_", `\`, "1", "th", "TH", "the"}
	random := rand.New(rand.NewPCG(7, 13))
	make := func(n int) string {
		var b strings.Builder
		for range random.IntN(n + 1) {
			b.WriteString(pieces[random.IntN(len(pieces))])
		}
		return b.String()
	}
	// SQLite's LIKE matches ASCII letters whatever their case; Postgres's
	// ILIKE does, on text compared byte by byte.
	like := " LIKE"
	if pgtest.OnPostgres() {
		like = `::text COLLATE "C" ILIKE`
	}
	held, lacked := 0, 0
	for range 20000 {
		x, text := make(12), make(3)
		if random.IntN(4) == 0 && len(x) > 2 { // a text x holds, its case changed
			i, j := random.IntN(len(x)), random.IntN(len(x))
			text = strings.ToUpper(x[min(i, j):max(i, j)])
		}
		var got, want bool
		if err := db.read.QueryRowContext(ctx, `SELECT holds(?1, ?2), ?1`+like+` ?3 ESCAPE '\'`, x, text, likePattern(text)).Scan(&got, &want); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("holds(%q, %q) = %v, LIKE says %v", x, text, got, want)
		}
		if want {
			held++
		} else {
			lacked++
		}
	}
	if held < 2000 || lacked < 2000 {
		t.Fatalf("%d strings held their text, %d lacked it: too few of one to tell", held, lacked)
	}
	var null bool
	if err := db.read.QueryRowContext(ctx, `SELECT holds(NULL, 'a') IS NULL AND holds('a', NULL) IS NULL`).Scan(&null); err != nil || !null {
		t.Errorf("holds with a NULL: %v, %v", null, err)
	}
}
