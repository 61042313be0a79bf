// Package outfile writes the files a user names on the command line
// (exports, backups) so that nothing there is lost: a regular file is
// replaced whole or not at all, through a temporary file renamed into
// place; a device, FIFO or socket (/dev/null, a named pipe) is written
// through and stays what it was; a symbolic link is followed, never
// replaced. The temporary files of a process that was killed are removed
// by the next write into the same folder.
package outfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Target is where a write to a path a user gave goes.
type Target struct {
	// Path is the file to replace, with symbolic links resolved; for a
	// target written through, the path as given.
	Path string
	// Through is set when Path exists and is not a regular file: it is
	// opened and written, never replaced.
	Through bool
}

// Resolve says where a write to path goes. A path that does not exist is a
// new regular file; its folder must exist.
func Resolve(path string) (Target, error) {
	st, err := os.Stat(path) // follows links
	switch {
	case err == nil && st.IsDir():
		return Target{}, fmt.Errorf("%s is a folder", path)
	case err == nil && !st.Mode().IsRegular():
		return Target{Path: path, Through: true}, nil
	case err == nil:
		real, err := filepath.EvalSymlinks(path)
		if err != nil {
			return Target{}, err
		}
		return Target{Path: real}, nil
	case errors.Is(err, fs.ErrNotExist):
		// A dangling link would be replaced by a file: follow it as far as it goes.
		if real, lerr := os.Readlink(path); lerr == nil {
			if !filepath.IsAbs(real) {
				real = filepath.Join(filepath.Dir(path), real)
			}
			return Resolve(real)
		}
		if _, err := os.Stat(filepath.Dir(path)); err != nil {
			return Target{}, fmt.Errorf("no folder %s", filepath.Dir(path))
		}
		return Target{Path: path}, nil
	default:
		return Target{}, err
	}
}

// Write writes what fn writes to path: into a temporary file beside a
// regular file, renamed over it once fn and the writes succeed (mode
// 0644), or straight into a device or FIFO.
func Write(path string, fn func(io.Writer) error) error {
	t, err := Resolve(path)
	if err != nil {
		return err
	}
	if t.Through {
		return writeThrough(t.Path, fn)
	}
	f, err := Temp(filepath.Dir(t.Path), "out")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	w := bufio.NewWriter(f)
	err = fn(w)
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = f.Chmod(0o644)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(f.Name(), t.Path)
}

func writeThrough(path string, fn func(io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	err = fn(w)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Place puts the finished file tmp at t: renamed over a regular file, or
// copied into a target written through and then removed.
func Place(tmp string, t Target) error {
	if !t.Through {
		return os.Rename(tmp, t.Path)
	}
	defer os.Remove(tmp)
	src, err := os.Open(tmp)
	if err != nil {
		return err
	}
	defer src.Close()
	return writeThrough(t.Path, func(w io.Writer) error {
		_, err := io.Copy(w, src)
		return err
	})
}

// Temp creates a temporary file in dir named for this process
// (.assay-KIND-PID-*), first removing the temporary files that processes
// no longer running left there.
func Temp(dir, kind string) (*os.File, error) {
	Clean(dir, kind)
	return os.CreateTemp(dir, fmt.Sprintf(".assay-%s-%d-*", kind, os.Getpid()))
}

// TempName is the name of a new temporary file in dir (see Temp), which
// does not exist yet: for a program that wants to create the file itself.
func TempName(dir, kind string) (string, error) {
	f, err := Temp(dir, kind)
	if err != nil {
		return "", err
	}
	name := f.Name()
	f.Close()
	return name, os.Remove(name)
}

// Clean removes dir's temporary files of this kind whose process is gone,
// and returns their names.
func Clean(dir, kind string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	prefix := ".assay-" + kind + "-"
	var removed []string
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || e.IsDir() {
			continue
		}
		pidText, _, named := strings.Cut(rest, "-")
		if !named {
			// Named without a process, as earlier versions did: left alone
			// while it may still be written.
			if info, err := e.Info(); err != nil || time.Since(info.ModTime()) < time.Hour {
				continue
			}
		} else if pid, err := strconv.Atoi(pidText); err != nil || pid <= 0 || alive(pid) {
			continue
		}
		if os.Remove(filepath.Join(dir, e.Name())) == nil {
			removed = append(removed, e.Name())
		}
	}
	return removed
}

// alive says whether a process of this id runs (or may: one of another
// user's that cannot be signalled counts as running).
func alive(pid int) bool {
	if pid == os.Getpid() {
		return true
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
