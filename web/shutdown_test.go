package web_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"go.uber.org/goleak"

	"assay/web"
)

// A server asked to stop while it sends a large export to a client that
// has stopped reading ends within 5 s: the export is cut short, its
// connection closed, nothing of it left running.
func TestShutdownDuringALargeExport(t *testing.T) {
	db, run, _ := buildRunOf(t, 1000, 1) // 15,000 results
	ignore := goleak.IgnoreCurrent()
	s, err := web.New(db, web.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.ListenAndServe(ctx, ln) }()
	client := &http.Client{}
	resp, err := client.Get(fmt.Sprintf("http://%s/runs/%d/export.json", ln.Addr(), run))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	// The first bytes, then no more: the export waits on the client.
	if _, err := io.ReadFull(resp.Body, make([]byte, 64<<10)); err != nil || resp.StatusCode != 200 {
		t.Fatalf("export: %d %v", resp.StatusCode, err)
	}
	start := time.Now()
	stop()
	if err := <-done; err != nil {
		t.Errorf("serve: %v", err)
	}
	closing, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.Close(closing); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	t.Logf("stopped in %s", took)
	if took > 5*time.Second {
		t.Errorf("the server took %s to stop during an export, want under 5 s", took)
	}
	resp.Body.Close()
	client.CloseIdleConnections()
	goleak.VerifyNone(t, ignore)
}
