package ingest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"syscall"

	"assay"
	"assay/store"
)

// ReadFile reads a dataset file from disk, refusing one larger than
// DefaultMaxBytes without reading further: /dev/zero or a runaway pipe
// ends with an error, not with the machine's memory. The file is read into
// a buffer of its size (a pipe or device is first copied into a temporary
// file to learn it): a growing buffer left as much again behind it, and
// took /dev/zero to 288 MB before refusing it.
func ReadFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		spooled, err := spool(path, f)
		if err != nil {
			return nil, err
		}
		defer os.Remove(spooled.Name())
		defer spooled.Close()
		if _, err := spooled.Seek(0, io.SeekStart); err != nil {
			return nil, err
		}
		f = spooled
		if info, err = f.Stat(); err != nil {
			return nil, err
		}
	}
	if info.Size() > DefaultMaxBytes {
		return nil, assay.Errorf(assay.ETOOLARGE, "%s: the file is over the %s MiB limit of a dataset", path, mib(DefaultMaxBytes))
	}
	var buf bytes.Buffer
	buf.Grow(int(info.Size()) + bytes.MinRead) // room to see the end without growing
	if _, err = buf.ReadFrom(io.LimitReader(f, DefaultMaxBytes+1)); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if buf.Len() > DefaultMaxBytes { // grown since
		return nil, assay.Errorf(assay.ETOOLARGE, "%s: the file is over the %s MiB limit of a dataset", path, mib(DefaultMaxBytes))
	}
	return buf.Bytes(), nil
}

// ImportFile imports the dataset file at path as Import does. A regular
// file is mapped into memory rather than read into it: its pages are the
// kernel's file cache, read as they are reached, and the Go heap holds
// only what is decoded from them. Read, a 44 MB file was held on the heap
// while it was decoded twice, and assay import peaked at 134 MB.
func ImportFile(ctx context.Context, db *store.DB, path string, opts Options, name string) (d *store.Dataset, created bool, err error) {
	data, unmap, mappedFile, err := mapFile(path)
	if err != nil {
		return nil, false, err
	}
	defer unmap()
	mapped(path)
	if opts.Filename == "" {
		opts.Filename = path
	}
	if mappedFile {
		// The pages read are given back as the reading goes on: they stay
		// in the kernel's cache, and leave this process's memory (a file at
		// the 64 MiB limit took the import to 107 MiB).
		page := os.Getpagesize()
		opts.release = func(upTo int) {
			if n := upTo / page * page; n > 0 {
				_ = syscall.Madvise(data[:n], syscall.MADV_DONTNEED)
			}
		}
	}
	err = readMapped(path, func() (err error) {
		d, created, err = Import(ctx, db, data, opts, name)
		return err
	})
	return d, created, err
}

// mapped is called once a file is mapped; tests change the file there.
var mapped = func(path string) {}

// readMapped calls read, which reads the file at path mapped into memory.
// A file cut short meanwhile faults where it now ends: the fault is an
// error, not the end of the process, and the transactions read had open
// are rolled back as the fault unwinds them.
func readMapped(path string, read func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(interface{ Addr() uintptr }); !ok {
				panic(r)
			}
			err = assay.Errorf(assay.EINVALID, "%s: the file was cut short while it was read: nothing was stored", path)
		}
	}()
	return read()
}

// mapFile maps the file at path read-only; mapped is false for an empty
// one, which has nothing to map. What is not a
// regular file (a pipe, a device) is first copied into a temporary file,
// up to the limit: read into memory, /dev/zero took 288 MB to be refused.
func mapFile(path string) (data []byte, unmap func(), mapped bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, false, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, nil, false, err
	}
	if !info.Mode().IsRegular() {
		spooled, err := spool(path, f)
		if err != nil {
			return nil, nil, false, err
		}
		defer spooled.Close()
		os.Remove(spooled.Name()) // the mapping keeps its pages
		f = spooled
		if info, err = f.Stat(); err != nil {
			return nil, nil, false, err
		}
	}
	if info.Size() > DefaultMaxBytes {
		return nil, nil, false, assay.Errorf(assay.ETOOLARGE, "%s: the file is %s MiB, over the %s MiB limit of a dataset",
			path, mib(info.Size()), mib(DefaultMaxBytes))
	}
	if info.Size() == 0 {
		return nil, func() {}, false, nil
	}
	data, err = syscall.Mmap(int(f.Fd()), 0, int(info.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, false, fmt.Errorf("read %s: %w", path, err)
	}
	return data, func() { _ = syscall.Munmap(data) }, true, nil
}

// spool copies what r gives, up to one byte past the limit of a dataset,
// into a temporary file, and refuses it past the limit.
func spool(path string, r io.Reader) (*os.File, error) {
	tmp, err := os.CreateTemp("", "assay-import-*")
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	n, err := io.Copy(tmp, io.LimitReader(r, DefaultMaxBytes+1))
	if err == nil && n > DefaultMaxBytes {
		err = assay.Errorf(assay.ETOOLARGE, "%s: the file is over the %s MiB limit of a dataset", path, mib(DefaultMaxBytes))
	} else if err != nil {
		err = fmt.Errorf("read %s: %w", path, err)
	}
	if err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return nil, err
	}
	return tmp, nil
}
