package outfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func writeString(s string) func(io.Writer) error {
	return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A character device written to stays a device: a copy of /dev/null made
// with mknod in a temporary folder, as `-o /dev/null` would meet it.
func TestADeviceIsWrittenThroughNotReplaced(t *testing.T) {
	dev := filepath.Join(t.TempDir(), "null")
	if err := syscall.Mknod(dev, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		t.Fatalf("mknod (the tests run as root in CI): %v", err)
	}
	if err := Write(dev, writeString("an export")); err != nil {
		t.Fatal(err)
	}
	st, err := os.Lstat(dev)
	if err != nil || st.Mode()&os.ModeCharDevice == 0 {
		t.Fatalf("the device became %v (%v)", st.Mode(), err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(dev)); len(entries) != 1 {
		t.Errorf("%d files beside the device", len(entries))
	}
}

func TestAFIFOIsWrittenThrough(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			got <- err.Error()
			return
		}
		defer f.Close()
		b, _ := io.ReadAll(f)
		got <- string(b)
	}()
	if err := Write(fifo, writeString("through the pipe")); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "through the pipe" {
		t.Errorf("read %q from the pipe", s)
	}
	if st, _ := os.Lstat(fifo); st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the pipe became %v", st.Mode())
	}
}

// A link to a file stays a link; its file gets the new content. A link
// to nothing yet makes the file it names.
func TestALinkIsFollowed(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real.json")
	os.WriteFile(real, []byte("old"), 0o644)
	link := filepath.Join(dir, "latest.json")
	os.Symlink("real.json", link)
	if err := Write(link, writeString("new")); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Lstat(link); st.Mode()&os.ModeSymlink == 0 {
		t.Error("the link was replaced")
	}
	if s := read(t, real); s != "new" {
		t.Errorf("the linked file holds %q", s)
	}
	dangling := filepath.Join(dir, "next.json")
	os.Symlink("made.json", dangling)
	if err := Write(dangling, writeString("made")); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Lstat(dangling); st.Mode()&os.ModeSymlink == 0 || read(t, filepath.Join(dir, "made.json")) != "made" {
		t.Error("a link to nothing should make the file it names")
	}
}

// A regular file is replaced whole or not at all.
func TestARegularFileIsReplacedWholeOrNotAtAll(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "report.html")
	os.WriteFile(path, []byte("the old report"), 0o600)
	err := Write(path, func(w io.Writer) error {
		io.WriteString(w, "half a rep")
		return errors.New("disk full")
	})
	if err == nil || read(t, path) != "the old report" {
		t.Fatalf("a failed write left %q (%v)", read(t, path), err)
	}
	if err := Write(path, writeString("the new report")); err != nil || read(t, path) != "the new report" {
		t.Fatalf("%q, %v", read(t, path), err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v", st.Mode().Perm())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d files left in the folder", len(entries))
	}
	if err := Write(filepath.Join(dir, "no", "such.html"), writeString("x")); err == nil || !strings.Contains(err.Error(), "no folder") {
		t.Errorf("a missing folder: %v", err)
	}
	if err := Write(dir, writeString("x")); err == nil || !strings.Contains(err.Error(), "is a folder") {
		t.Errorf("a folder: %v", err)
	}
}

// Temporary files of a process that is gone are removed by the next write;
// those of a running process, and recent ones named the old way, stay.
func TestTheTemporaryFilesOfAKilledProcessAreRemoved(t *testing.T) {
	dir := t.TempDir()
	gone := filepath.Join(dir, ".assay-backup-999999999-123.db") // above any pid Linux gives
	running := filepath.Join(dir, ".assay-backup-1-456.db")      // init runs
	oldStyle := filepath.Join(dir, ".assay-backup-789.db")
	recentOldStyle := filepath.Join(dir, ".assay-backup-790.db")
	other := filepath.Join(dir, "keep.db")
	for _, p := range []string{gone, running, oldStyle, recentOldStyle, other} {
		os.WriteFile(p, []byte("x"), 0o644)
	}
	hourAgo := time.Now().Add(-2 * time.Hour)
	os.Chtimes(oldStyle, hourAgo, hourAgo)
	removed := Clean(dir, "backup")
	if strings.Join(removed, ",") != ".assay-backup-789.db,.assay-backup-999999999-123.db" {
		t.Errorf("removed %v", removed)
	}
	for _, p := range []string{running, recentOldStyle, other} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s removed", filepath.Base(p))
		}
	}
}
