package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"assay/tally"
	"assay/web"
)

// BenchmarkUpload uploads a dataset of 100,000 multiple-choice questions
// (44 MB of JSONL, in MMLU's shape) through POST /api/datasets, and prints
// how long it took and the process's peak memory while it was read and
// stored: the file's bytes are held once, and its samples are stored as
// they are made, never all held.
func BenchmarkUpload(b *testing.B) {
	const samples = 100000
	dir := b.TempDir()
	body, err := os.Create(filepath.Join(dir, "upload"))
	if err != nil {
		b.Fatal(err)
	}
	form := multipart.NewWriter(body)
	part, _ := form.CreateFormFile("file", "mmlu-large.jsonl")
	enc := json.NewEncoder(part)
	subjects := []string{"physics", "law", "history", "medicine"}
	for i := range samples {
		q := fmt.Sprintf("Question %d: which of the following best describes the process numbered %d, in a stem as long as a real one? ", i, i)
		enc.Encode(map[string]any{"subject": subjects[i%4], "question": q + q,
			"choices": []string{fmt.Sprintf("option A of %d", i), fmt.Sprintf("option B of %d", i), fmt.Sprintf("option C of %d", i), fmt.Sprintf("option D of %d", i)},
			"answer":  string(rune('A' + i%4))})
	}
	form.Close()
	size, _ := body.Seek(0, io.SeekCurrent)
	for range b.N {
		db, err := tally.Open(context.Background(), filepath.Join(b.TempDir(), "assay.db"))
		if err != nil {
			b.Fatal(err)
		}
		s, err := web.New(db, web.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), MaxUpload: 64 << 20})
		if err != nil {
			b.Fatal(err)
		}
		body.Seek(0, io.SeekStart)
		req := httptest.NewRequest(http.MethodPost, "/api/datasets", io.NopCloser(body))
		req.Host = "127.0.0.1"
		req.Header.Set("Content-Type", form.FormDataContentType())
		runtime.GC()
		debug.FreeOSMemory()
		resetPeakRSS()
		before := memoryMB("VmRSS")
		rec := httptest.NewRecorder()
		start := time.Now()
		s.Handler().ServeHTTP(rec, req)
		took := time.Since(start)
		if rec.Code != http.StatusCreated {
			b.Fatalf("upload: %d %s", rec.Code, rec.Body.String())
		}
		fmt.Printf("%-58s %6.1f MB in %.2f s  peak %5.1f MB (%.1f before)\n",
			fmt.Sprintf("upload of %d samples", samples), float64(size)/1e6, took.Seconds(), memoryMB("VmHWM"), before)
		b.ReportMetric(memoryMB("VmHWM"), "peak-MB")
		db.Close()
	}
}
