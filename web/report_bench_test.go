package web_test

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"assay/internal/pgtest"
	"assay/store"
	"assay/tally"
	"assay/web"
)

// Sizes of the large run: 1,000 samples × 5 conditions × 3 repetitions.
const (
	benchSamples    = 1000
	benchConditions = 5
	benchReps       = 3
)

// BenchmarkReportPages builds a run of 15,000 results and 45,000 rubric scores
// straight in the store, then serves the report page, the samples table with
// a filter and with a search, and a sample page through the real handler.
// It prints the server time per request (the median of benchRequests after a
// first request, whose time is printed too — the median of coldServers
// fresh servers' — since it fills any cache), the
// HTML size and the process's peak memory (VmHWM, reset before each page). Targets: under 150 ms, under 1 MB
// of HTML, under 150 MB.
func BenchmarkReportPages(b *testing.B) {
	db, run, sample := buildLargeRun(b, 1)
	s, err := web.New(db, web.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	base := fmt.Sprintf("/runs/%d", run)
	for _, p := range []struct{ name, path string }{
		{"report", base},
		{"samples-filtered", base + "/samples?metric=rubric.factual_adherence&below=3&sort=spread&dir=desc"},
		{"samples-search", base + "/samples?q=photosynthesis&sort=rubric.completeness"},
		{"samples-search-few", base + "/samples?q=not+certain"},
		{"samples-search-every", base + "/samples?q=step+by+step"},
		{"sample", fmt.Sprintf("%s/samples/%d", base, sample)},
		{"review-next", base + "/review/next?order=lowest"},
		{"sample-in-filtered-table", fmt.Sprintf("%s/samples/%d?metric=rubric.factual_adherence&below=3&sort=spread&dir=desc", base, sample)},
	} {
		b.Run(p.name, func(b *testing.B) { benchPage(b, db, s.Handler(), p.path) })
	}
}

// BenchmarkReportJudgeRepetitions serves the report of the same run judged
// three times over: 45,000 judged answers, 135,000 scores, with the
// variance split into samples, agent and judge. Targets: first request
// under 400 ms, warm under 60 ms.
func BenchmarkReportJudgeRepetitions(b *testing.B) {
	db, run, _ := buildLargeRun(b, 3)
	s, err := web.New(db, web.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("report", func(b *testing.B) { benchPage(b, db, s.Handler(), fmt.Sprintf("/runs/%d", run)) })
}

// BenchmarkReport150k serves the pages of a run ten times bigger: 10,000
// samples × 5 conditions × 3 repetitions, 150,000 results and 450,000
// scores, and polls its progress as a live page would. Issue 13's targets:
// report first request < 300 ms and warm < 30 ms, samples table < 150 ms,
// sample page < 20 ms, a progress poll < 5 ms; and the runs list beside it;
// and the report and samples table as Chromium loads them.
func BenchmarkReport150k(b *testing.B) {
	db, run, sample := buildRunOf(b, 10000, 1, "step by step", "photosynthesis", "not certain")
	s, err := web.New(db, web.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	base := fmt.Sprintf("/runs/%d", run)
	for _, p := range []struct{ name, path string }{
		{"report", base},
		{"progress", base + "/progress"},
		{"api-run", "/api" + base},
		{"runs", "/runs"},
		{"samples-filtered", base + "/samples?metric=rubric.factual_adherence&below=3&sort=spread&dir=desc"},
		{"samples-search", base + "/samples?q=photosynthesis&sort=rubric.completeness"},
		{"samples-search-few", base + "/samples?q=not+certain"},
		{"samples-search-every", base + "/samples?q=step+by+step"},
		{"sample", fmt.Sprintf("%s/samples/%d", base, sample)},
		{"review-next", base + "/review/next?order=lowest"},
	} {
		b.Run(p.name, func(b *testing.B) { benchPage(b, db, s.Handler(), p.path) })
	}
	for _, q := range []string{"the", "step by step", "photosynthesis", "not certain"} {
		b.Run("search-in-open-table-"+strings.ReplaceAll(q, " ", "-"), func(b *testing.B) { benchSearchInOpenTable(b, db, base+"/samples", q) })
	}
	for _, format := range []string{"json", "csv", "html"} {
		b.Run("export-"+format, func(b *testing.B) { benchExport(b, s.Handler(), base+"/export."+format) })
	}
	b.Run("browser-report", func(b *testing.B) { benchBrowser(b, s.Handler(), base) })
	b.Run("browser-samples", func(b *testing.B) { benchBrowser(b, s.Handler(), base+"/samples") })
}

// benchSearchInOpenTable times a search of a samples table a fresh server
// has just shown, as a person types one: the median of coldServers.
func benchSearchInOpenTable(b *testing.B, db *store.DB, table, q string) {
	path := table + "?q=" + url.QueryEscape(q)
	var firsts []time.Duration
	for range coldServers {
		fresh, err := web.New(db, web.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			b.Fatal(err)
		}
		serve(b, fresh.Handler(), table)
		start := time.Now()
		serve(b, fresh.Handler(), path)
		firsts = append(firsts, time.Since(start))
	}
	slices.Sort(firsts)
	median := ms(firsts[len(firsts)/2])
	b.ReportMetric(median, "ms/search")
	fmt.Printf("%-58s %6.1f ms, the table open already (target < 150)\n", path, median)
}

// countingWriter is a ResponseWriter that counts what it is sent and keeps
// none of it, as a client reading a download would.
type countingWriter struct {
	header http.Header
	code   int
	n      int64
}

func (w *countingWriter) Header() http.Header         { return w.header }
func (w *countingWriter) WriteHeader(code int)        { w.code = code }
func (w *countingWriter) Write(p []byte) (int, error) { w.n += int64(len(p)); return len(p), nil }
func (w *countingWriter) Flush()                      {}

// benchExport downloads an export and prints its size, its rate and the
// process's peak memory while it streamed. Targets: JSON and CSV ≥ 50 MB/s,
// flat memory; the HTML file's transcripts stop at a budget (32 MB).
func benchExport(b *testing.B, h http.Handler, path string) {
	runtime.GC()
	debug.FreeOSMemory()
	resetPeakRSS()
	before := memoryMB("VmRSS")
	w := &countingWriter{header: http.Header{}, code: http.StatusOK}
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.Host = "127.0.0.1"
	stop := profileFirsts(b)
	start := time.Now()
	h.ServeHTTP(w, req)
	took := time.Since(start)
	stop()
	if w.code != http.StatusOK {
		b.Fatalf("GET %s: %d", path, w.code)
	}
	rate := float64(w.n) / 1e6 / took.Seconds()
	b.ReportMetric(rate, "MB/s")
	target := "(target ≥ 50)"
	if strings.HasSuffix(path, ".html") {
		target = "(a report)   "
	}
	fmt.Printf("%-58s %6.1f MB in %.2f s: %5.1f MB/s %s  peak %5.1f MB (%.1f before)\n",
		path, float64(w.n)/1e6, took.Seconds(), rate, target, memoryMB("VmHWM"), before)
}

// benchRequests is how many timed requests each page gets; the median is printed.
const benchRequests = 7

// coldServers is how many fresh servers make a page's first request; the
// median is printed, since one first request on a shared machine is noise.
const coldServers = 3

func benchPage(b *testing.B, db *store.DB, h http.Handler, path string) {
	var firsts []time.Duration
	stop := profileFirsts(b)
	for range coldServers {
		fresh, err := web.New(db, web.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		serve(b, fresh.Handler(), path) // the first request fills the caches a server would have warm
		firsts = append(firsts, time.Since(start))
		web.WaitWarming(fresh) // what it goes on with, not the next one's first request
	}
	stop()
	slices.Sort(firsts)
	cold := ms(firsts[len(firsts)/2])
	serve(b, h, path) // warms the server the timed requests go to
	runtime.GC()
	debug.FreeOSMemory()
	resetPeakRSS()
	rss := memoryMB("VmRSS")
	b.ResetTimer()
	var size int
	times := make([]time.Duration, 0, benchRequests*b.N)
	cpu0 := cpuTime()
	for range b.N {
		for range benchRequests {
			start := time.Now()
			size = serve(b, h, path)
			times = append(times, time.Since(start))
		}
	}
	b.StopTimer()
	cpu := ms(cpuTime()-cpu0) / float64(len(times))
	slices.Sort(times)
	median, slowest := ms(times[len(times)/2]), ms(times[len(times)-1])
	peak := memoryMB("VmHWM")
	b.ReportMetric(median, "ms/req")
	b.ReportMetric(float64(size)/1024, "html-KiB")
	b.ReportMetric(peak, "peak-MB")
	fmt.Printf("%-58s %6.1f ms (slowest %6.1f, first %6.1f, CPU %6.1f)  %6.1f KiB HTML  peak %5.1f MB (%.1f before)\n",
		path, median, slowest, cold, cpu, float64(size)/1024, peak, rss)
}

// profileFirsts writes a CPU profile of a page's first requests (or of an
// export) to the
// folder ASSAY_BENCH_PROFILE names, one file per benchmark, when it is set.
func profileFirsts(b *testing.B) (stop func()) {
	dir := os.Getenv("ASSAY_BENCH_PROFILE")
	if dir == "" {
		return func() {}
	}
	f, err := os.Create(filepath.Join(dir, strings.NewReplacer("/", "_").Replace(b.Name())+".pprof"))
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatal(err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// serve makes one request through the handler and returns the body's size.
func serve(b testing.TB, h http.Handler, path string) int {
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.Host = "127.0.0.1" // a server without a token answers to loopback names only
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK && rec.Code != http.StatusSeeOther { // a review queue's step redirects
		b.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body.String()[:min(rec.Body.Len(), 300)])
	}
	return rec.Body.Len()
}

// cpuTime is the CPU time the process has used, in user and system mode:
// unlike the wall time, it does not grow when other processes share the machine.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// resetPeakRSS makes VmHWM start again from the current RSS.
func resetPeakRSS() {
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

// memoryMB reads a field of /proc/self/status in megabytes.
func memoryMB(field string) float64 {
	data, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}

// buildLargeRun stores the dataset and the run through the store, then writes
// the results, judgements and scores in one transaction of prepared inserts.
// It returns the database, the run's id and the row id of a sample in the middle.
func buildLargeRun(b *testing.B, judgeReps int) (*store.DB, int64, int64) {
	return buildRunOf(b, benchSamples, judgeReps)
}

// buildRunOf is buildLargeRun with samples samples. The searches given are
// timed on a fresh server before the response index has reached the run,
// as on a run just finished: the samples table first, then each search,
// the first of which starts the index's catch-up.
func buildRunOf(b testing.TB, benchSamples, judgeReps int, searches ...string) (*store.DB, int64, int64) {
	b.Helper()
	start := time.Now()
	path := filepath.Join(b.TempDir(), "assay.db")
	db, err := tally.Open(context.Background(), path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	var rows []map[string]any
	for i := 1; i <= benchSamples; i++ {
		topic := []string{"photosynthesis", "the French revolution", "prime numbers", "plate tectonics"}[i%4]
		rows = append(rows, map[string]any{"id": fmt.Sprintf("q%04d", i),
			"question": fmt.Sprintf("Question %d: explain the role of %s in two paragraphs, with one example.", i, topic),
			"answer":   fmt.Sprintf("A reference answer about %s. %s", topic, strings.Repeat("It states the key facts. ", 8))})
	}
	conditions := make([]string, benchConditions)
	for i := range conditions {
		conditions[i] = fmt.Sprintf("condition-%d", i+1)
	}
	sr := storeRun(b, db, "large.jsonl", jsonl(rows...), conditions, benchReps, func(store.Sample, string, int) store.Result {
		return store.Result{} // left out: the bulk insert below writes them
	})
	if err := bulkResults(path, sr, judgeReps); err != nil {
		b.Fatal(err)
	}
	// What the store keeps as each result commits, computed at once.
	if err := tally.Of(db).RebuildAggregates(context.Background(), sr.Run.ID); err != nil {
		b.Fatal(err)
	}
	built := time.Since(start)
	if pgtest.OnPostgres() {
		db = onPostgres(b, db)
		fmt.Printf("copied into Postgres in %s (ASSAY_TEST_STORE=postgres)\n", (time.Since(start) - built).Round(time.Millisecond))
	}
	if len(searches) > 0 {
		s, err := web.New(db, web.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			b.Fatal(err)
		}
		table := fmt.Sprintf("/runs/%d/samples", sr.Run.ID)
		start := time.Now()
		serve(b, s.Handler(), table)
		fmt.Printf("%-58s %6.1f ms folding the table, which is then kept\n", table, ms(time.Since(start)))
		for _, q := range searches {
			path := table + "?q=" + url.QueryEscape(q)
			start := time.Now()
			serve(b, s.Handler(), path)
			fmt.Printf("%-58s %6.1f ms before the response index reaches the run\n", path, ms(time.Since(start)))
		}
	}
	// What a server does in the background once a search meets the results
	// the response index lacks.
	start = time.Now()
	if _, err := tally.Of(db).IndexResponses(context.Background()); err != nil {
		b.Fatal(err)
	}
	fmt.Printf("built %d results and %d scores in %s; the response index caught up in %s\n", benchSamples*benchConditions*benchReps,
		3*judgeReps*benchSamples*benchConditions*benchReps, built.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	return db, sr.Run.ID, sr.Samples[fmt.Sprintf("q%04d", benchSamples/2)].ID
}

// onPostgres copies a database built as a SQLite file into a new Postgres
// one and returns it, for the benchmarks' figures against Postgres.
func onPostgres(b testing.TB, db *store.DB) *store.DB {
	b.Helper()
	pg, err := tally.Open(context.Background(), pgtest.DSN(b))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { pg.Close() })
	if _, err := db.CopyTo(context.Background(), pg); err != nil {
		b.Fatal(err)
	}
	return pg
}

// bulkResults writes every result of a stored run with a rubric judgement of
// three scores, each with a reasoning of about 300 characters, and responses
// of about 800 characters; one result in ten has unverified claims, one
// condition in five calls tools.
func bulkResults(path string, sr *storedRun, judgeReps int) error {
	conn, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(OFF)")
	if err != nil {
		return err
	}
	defer conn.Close()
	tx, err := conn.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	insResult, _ := tx.Prepare(`INSERT INTO results (id, run_id, sample_id, condition, repetition, response, tokens_in,
		tokens_out, cost_usd, latency_ms, attempts, tool_calls, created_at) VALUES (?, ?, ?, ?, ?, ?, 420, 210, 0.00063, 2300, 1, ?, ?)`)
	insJudgement, _ := tx.Prepare(`INSERT INTO judgements (id, result_id, run_id, evaluator, judge_repetition, raw, unverified_claims, tokens_in,
		tokens_out, cost_usd, latency_ms) VALUES (?, ?, ?, 'rubric', ?, ?, ?, 900, 260, 0.0012, 1800)`)
	insScore, err := tx.Prepare(`INSERT INTO scores (judgement_id, result_id, run_id, metric, value, reasoning) VALUES (?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	// In the order a run stores them, its plan's: repetition by repetition,
	// sample by sample in the dataset's order, every condition in turn.
	samples := slices.SortedFunc(maps.Values(sr.Samples), func(a, b store.Sample) int { return cmp.Compare(a.ID, b.ID) })
	id := int64(0)
	for rep := 1; rep <= sr.Run.Repetitions; rep++ {
		for _, smp := range samples {
			for _, c := range sr.Run.Conditions {
				id++
				if err := bulkResult(insResult, insJudgement, insScore, sr.Run.ID, id, smp, c.Name, rep, benchResponse(id, smp), judgeReps); err != nil {
					return err
				}
			}
		}
	}
	// What the store keeps on the run as each result commits.
	if _, err := tx.Exec(`UPDATE runs SET results_count = ?, results_first = 1, results_last = ? WHERE id = ?`, id, id, sr.Run.ID); err != nil {
		return err
	}
	return tx.Commit()
}

func bulkResult(insResult, insJudgement, insScore *sql.Stmt, run, id int64, smp store.Sample, cond string, rep int, response string, judgeReps int) error {
	calls := "[]"
	if cond == "condition-2" {
		calls = `[{"turn":1,"server":"docs","tool":"search","arguments":{"query":"` + smp.SampleID + `"},"result":"Three passages found.","is_error":false,"duration_ms":140}]`
	}
	if _, err := insResult.Exec(id, run, smp.ID, cond, rep, response, calls, "2026-01-02T03:04:05Z"); err != nil {
		return fmt.Errorf("result: %w", err)
	}
	claims := "[]"
	if id%10 == 0 {
		claims = `["The response cites a study the reference does not mention."]`
	}
	metrics := []string{"factual_adherence", "completeness", "helpfulness_and_clarity"}
	for jr := range judgeReps {
		var raw strings.Builder
		raw.WriteString("{")
		values := make([]float64, len(metrics))
		for k := range metrics {
			values[k] = float64(1 + (int(smp.ID)*7+len(cond)*3+rep*(k+1)+int(id%5)+jr*(k%2))%5)
			fmt.Fprintf(&raw, "%q: %g, %q: %q, ", metrics[k], values[k], metrics[k]+"_reasoning", benchReasoning)
		}
		raw.WriteString(`"unverified_claims": ` + claims + "}")
		jid := id*int64(judgeReps) + int64(jr)
		if _, err := insJudgement.Exec(jid, id, run, jr, raw.String(), claims); err != nil {
			return fmt.Errorf("judgement: %w", err)
		}
		for k, m := range metrics {
			if _, err := insScore.Exec(jid, id, run, m, values[k], benchReasoning); err != nil {
				return fmt.Errorf("score: %w", err)
			}
		}
	}
	return nil
}

// benchResponse is a response of about 800 characters on the sample's
// topic: every one says "step by step", a quarter name each topic, and one
// in ten begins "I am not certain", so that text searches meet every
// response, some and few.
func benchResponse(id int64, smp store.Sample) string {
	_, rest, _ := strings.Cut(smp.Input, "the role of ")
	topic, _, _ := strings.Cut(rest, " in two paragraphs")
	hedge := ""
	if id%10 == 0 {
		hedge = "I am not certain, but "
	}
	return "**Short answer.** " + hedge + "On " + topic + ": " +
		strings.Repeat("The response explains the idea step by step, cites the mechanism, and gives an example. ", 8)
}

// benchReasoning is a judge's reasoning of a realistic length (about 300 characters).
var benchReasoning = "The response states the main facts of the reference correctly and in the right order, " +
	"but it adds a detail about the mechanism that the reference does not support, and it leaves out the " +
	"second example the question asked for. The wording is clear and the structure helps the reader follow it."
