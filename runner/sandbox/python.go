package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// systemPython is preferred over whatever python3 comes first in PATH: it
// lives under /usr, which the sandbox already sees, and is readable by the
// unprivileged uid the sandbox runs as. A pyenv shim in PATH, by contrast, is
// a shell script that needs the caller's home and environment.
const systemPython = "/usr/bin/python3"

// python is an interpreter to run and the installation prefixes it needs
// beyond the system directories.
type python struct {
	path  string
	binds []string
}

// findPython resolves name (empty for the default) to an interpreter. One
// outside the system directories is asked for its real executable and its
// prefixes, which the sandbox then binds read-only.
func findPython(ctx context.Context, name string) (python, error) {
	if name == "" {
		name = "python3"
		if _, err := os.Stat(systemPython); err == nil {
			name = systemPython
		}
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return python{}, fmt.Errorf("find python: %w", err)
	}
	if real, err := filepath.EvalSymlinks(path); err == nil && underSystemDir(real) {
		return python{path: path}, nil
	}
	return askPython(ctx, path)
}

// askPython runs the trusted interpreter at path once, outside the sandbox,
// to learn its executable and prefixes (a pyenv shim or a virtualenv).
func askPython(ctx context.Context, path string) (python, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	const script = "import sys; print(sys.executable); print(sys.prefix); print(sys.base_prefix)"
	out, err := exec.CommandContext(ctx, path, "-I", "-c", script).Output()
	if err != nil {
		return python{}, fmt.Errorf("ask python %s: %w", path, err)
	}
	lines := strings.Fields(string(out))
	if len(lines) != 3 {
		return python{}, fmt.Errorf("ask python %s: unexpected answer %s", path, strconv.Quote(string(out)))
	}
	py := python{path: lines[0]}
	for _, prefix := range lines[1:] {
		if real, err := filepath.EvalSymlinks(prefix); err == nil {
			prefix = real
		}
		if !underSystemDir(prefix) && !slices.Contains(py.binds, prefix) {
			py.binds = append(py.binds, prefix)
		}
	}
	return py, nil
}

// underSystemDir reports whether path lies in a directory the sandbox
// always shows.
func underSystemDir(path string) bool {
	for _, dir := range systemDirs {
		if path == dir || strings.HasPrefix(path, dir+"/") {
			return true
		}
	}
	return false
}
