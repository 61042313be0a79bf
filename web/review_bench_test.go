package web_test

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"assay/web"
)

// BenchmarkReviews prints the server time of recording a verdict through
// the API, and of the report page of the 15,000-result run before and after
// 3,000 of its scores are reviewed, as judged and with reviews applied.
// Targets: a verdict under 20 ms; the reviewed report within 1.2× of the
// same report without reviews.
func BenchmarkReviews(b *testing.B) {
	db, run, _ := buildLargeRun(b, 1)
	s, err := web.New(db, web.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	h := s.Handler()
	page := fmt.Sprintf("/runs/%d", run)
	before := timePage(b, h, page)

	raw, err := sql.Open("sqlite", "file:"+db.Path+"?mode=ro")
	if err != nil {
		b.Fatal(err)
	}
	rows, err := raw.Query(`SELECT id, value FROM scores WHERE run_id = ? AND id % 15 = 0 ORDER BY id`, run)
	if err != nil {
		b.Fatal(err)
	}
	type score struct {
		id    int64
		value float64
	}
	var scores []score
	for rows.Next() {
		var sc score
		rows.Scan(&sc.id, &sc.value)
		scores = append(scores, sc)
	}
	rows.Close()
	raw.Close()
	give := func(body string) time.Duration {
		req := httptest.NewRequest(http.MethodPost, fmt.Sprintf("/api/runs/%d/reviews", run), strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Host = "127.0.0.1"
		rec := httptest.NewRecorder()
		start := time.Now()
		h.ServeHTTP(rec, req)
		took := time.Since(start)
		if rec.Code != http.StatusCreated {
			b.Fatalf("verdict: %d %s", rec.Code, rec.Body.String())
		}
		return took
	}
	// Verdicts through the API, timed one by one: a third override.
	times := make([]time.Duration, 0, len(scores))
	for i, sc := range scores {
		body := fmt.Sprintf(`{"score_id": %d, "verdict": "agree", "reviewer": "bench"}`, sc.id)
		if i%3 == 0 {
			body = fmt.Sprintf(`{"score_id": %d, "verdict": "override", "value": %d, "note": "off by one", "reviewer": "bench"}`,
				sc.id, 1+int(sc.value)%5)
		}
		times = append(times, give(body))
	}
	slices.Sort(times)
	fmt.Printf("%-58s %6.1f ms (p95 %6.1f, slowest %6.1f) over %d verdicts\n", "POST /api/runs/:id/reviews",
		ms(times[len(times)/2]), ms(times[len(times)*95/100]), ms(times[len(times)-1]), len(times))
	if n, _, _ := db.ReviewsVersion(context.Background(), run); n != len(scores) {
		b.Fatalf("%d verdicts stored, want %d", n, len(scores))
	}
	judged := timePage(b, h, page)
	reviewed := timePage(b, h, page+"?view=reviewed")
	fmt.Printf("report with %d verdicts: %.2f× (as judged), %.2f× (reviews applied) the time without reviews\n",
		len(scores), judged/before, reviewed/before)
	b.ReportMetric(judged/before, "x-judged")

	// A reviewer's next verdict, then the report as judged: its reviews
	// computed again, its figures kept.
	after := make([]time.Duration, 0, benchRequests)
	for i := range benchRequests {
		give(fmt.Sprintf(`{"score_id": %d, "verdict": "agree", "reviewer": "second"}`, scores[i].id))
		start := time.Now()
		serve(b, h, page)
		after = append(after, time.Since(start))
	}
	slices.Sort(after)
	fmt.Printf("%-58s %6.1f ms (slowest %6.1f)\n", "the report right after each verdict", ms(after[len(after)/2]), ms(after[len(after)-1]))
}

// timePage prints a page's first and median server time and returns the median.
func timePage(b *testing.B, h http.Handler, path string) float64 {
	start := time.Now()
	serve(b, h, path)
	cold := ms(time.Since(start))
	times := make([]time.Duration, 0, benchRequests)
	for range benchRequests {
		start := time.Now()
		serve(b, h, path)
		times = append(times, time.Since(start))
	}
	slices.Sort(times)
	median := ms(times[len(times)/2])
	fmt.Printf("%-58s %6.1f ms (first %6.1f)\n", path, median, cold)
	return median
}
