package ingest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"syscall"

	"assay/store"
)

// ReadFile reads a dataset file from disk, refusing one larger than
// DefaultMaxBytes without reading further: /dev/zero or a runaway pipe
// ends with an error, not with the machine's memory. A regular file is
// read into a buffer of its size: io.ReadAll's growing one left as much
// again behind it, and assay import of a 44 MB file peaked at 134–240 MB.
func ReadFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var buf bytes.Buffer
	if info, err := f.Stat(); err == nil && info.Mode().IsRegular() && info.Size() <= DefaultMaxBytes {
		buf.Grow(int(info.Size()) + bytes.MinRead) // room to see the end without growing
	}
	_, err = buf.ReadFrom(io.LimitReader(f, DefaultMaxBytes+1))
	data := buf.Bytes()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(data) > DefaultMaxBytes {
		return nil, store.Errorf(store.ETOOLARGE, "%s: the file is over the %s MiB limit of a dataset", path, mib(DefaultMaxBytes))
	}
	return data, nil
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
			err = store.Errorf(store.EINVALID, "%s: the file was cut short while it was read: nothing was stored", path)
		}
	}()
	return read()
}

// mapFile maps the regular file at path read-only, or reads it when it
// cannot be mapped (a pipe, a device, an empty file); mapped says which.
func mapFile(path string) (data []byte, unmap func(), mapped bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, false, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err == nil && info.Mode().IsRegular() && info.Size() > DefaultMaxBytes {
		return nil, nil, false, store.Errorf(store.ETOOLARGE, "%s: the file is %s MiB, over the %s MiB limit of a dataset",
			path, mib(info.Size()), mib(DefaultMaxBytes))
	}
	if err == nil && info.Mode().IsRegular() && info.Size() > 0 {
		if data, err := syscall.Mmap(int(f.Fd()), 0, int(info.Size()), syscall.PROT_READ, syscall.MAP_SHARED); err == nil {
			return data, func() { _ = syscall.Munmap(data) }, true, nil
		}
	}
	data, err = ReadFile(path)
	return data, func() {}, false, err
}
