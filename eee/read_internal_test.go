package eee

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"assay"
)

// An instances file past the bound is refused before a byte of it is read;
// one within it is a source of its size.
func TestAnInstancesFileIsBounded(t *testing.T) {
	dir := t.TempDir()
	huge := filepath.Join(dir, "huge.jsonl")
	os.WriteFile(huge, nil, 0o644)
	if err := os.Truncate(huge, MaxInstancesBytes+1); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	if _, err := File(huge); assay.ErrorCode(err) != assay.ETOOLARGE || !strings.Contains(err.Error(), "at most 256 MiB") {
		t.Errorf("an instances file over the bound: %v", err)
	}
	small := filepath.Join(dir, "small.jsonl")
	os.WriteFile(small, []byte("{}\n"), 0o644)
	if src, err := File(small); err != nil || src.Size != 3 {
		t.Errorf("a small file: %+v, %v", src, err)
	}
	if _, err := File("/dev/zero"); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("/dev/zero: %v", err)
	}
}
