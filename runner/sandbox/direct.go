package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// runDirect runs program without bubblewrap, for the explicit Unsandboxed
// opt-in: the same resource limits, a cleared environment, a private
// temporary directory as home and working directory, uid 65534 when the
// caller is root, the timeout and the process-group kill. It does not hide
// the host's files or network.
func (r *Runner) runDirect(ctx context.Context, limits Limits, program string) (*Result, error) {
	py, err := findPython(ctx, r.Python)
	if err != nil {
		return nil, fmt.Errorf("unsandboxed: %w", err)
	}
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		return nil, fmt.Errorf("unsandboxed: prlimit (util-linux) not found: %w", err)
	}
	dir, err := privateDir()
	if err != nil {
		return nil, fmt.Errorf("unsandboxed: %w", err)
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "main.py")
	if err := os.WriteFile(file, []byte(program), 0o444); err != nil {
		return nil, fmt.Errorf("unsandboxed: write program: %w", err)
	}

	args := append(prlimitArgs(prlimit, limits), py.path, "-I", "-B", "-u", file)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = directEnv(dir, py.binds)
	cmd.Dir, cmd.SysProcAttr = dir, dropRoot()
	res, err := execute(ctx, cmd, limits.Timeout, func() error { return nil })
	if err != nil {
		return res, fmt.Errorf("unsandboxed: %w", err)
	}
	if err := toolFailure(res); err != nil {
		return res, fmt.Errorf("unsandboxed: %w", err)
	}
	return res, nil
}

// privateDir makes a temporary directory that only the program's uid can
// use: the caller's, or 65534 when the caller is root.
func privateDir() (string, error) {
	dir, err := os.MkdirTemp("", "assay-sandbox-")
	if err != nil {
		return "", fmt.Errorf("temp dir: %w", err)
	}
	if os.Geteuid() == 0 {
		if err := os.Chown(dir, nobody, nobody); err != nil {
			os.RemoveAll(dir)
			return "", fmt.Errorf("temp dir: %w", err)
		}
	}
	return dir, nil
}

// directEnv is the whole environment of an unsandboxed program: none of the
// caller's variables (API keys among them) are passed on.
func directEnv(dir string, binds []string) []string {
	path := []string{"/usr/local/bin", "/usr/bin", "/bin"}
	for _, b := range binds {
		path = append([]string{b + "/bin"}, path...)
	}
	return []string{
		"PATH=" + strings.Join(path, ":"),
		"HOME=" + dir,
		"TMPDIR=" + dir,
		"LANG=C.UTF-8",
	}
}
