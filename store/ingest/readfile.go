package ingest

import (
	"fmt"
	"io"
	"os"

	"assay/store"
)

// ReadFile reads a dataset file from disk, refusing one larger than
// DefaultMaxBytes without reading further: /dev/zero or a runaway pipe
// ends with an error, not with the machine's memory.
func ReadFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, DefaultMaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(data) > DefaultMaxBytes {
		return nil, store.Errorf(store.ETOOLARGE, "%s: the file is over the %s MiB limit of a dataset", path, mib(DefaultMaxBytes))
	}
	return data, nil
}
