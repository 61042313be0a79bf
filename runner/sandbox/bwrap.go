package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// installHint tells an operator how to make the sandbox available.
const installHint = "install bubblewrap (apt-get install bubblewrap, version 0.8.0 or later) " +
	"and allow unprivileged user namespaces (sysctl user.max_user_namespaces > 0; " +
	"on Ubuntu 24.04 also kernel.apparmor_restrict_unprivileged_userns=0)"

// programPath is where the program appears inside the sandbox: a read-only
// file in the private /tmp, copied from a pipe by bwrap.
const programPath = "/tmp/main.py"

// systemDirs are the host directories the sandbox may see, read-only. On a
// merged-/usr system most are symlinks into /usr and are recreated as such.
var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}

// systemFiles are the few files under /etc that the dynamic loader and
// Python's time module read; nothing else of /etc is visible.
var systemFiles = []string{"/etc/ld.so.cache", "/etc/localtime"}

// Available returns nil when bubblewrap is installed and can create a
// sandbox here; otherwise an error wrapping ErrUnavailable that says how to
// install or enable it.
func Available() error {
	bwrap, err := lookBwrap()
	if err != nil {
		return err
	}
	truePath, err := exec.LookPath("true")
	if err != nil {
		return fmt.Errorf("%w: find true: %w", ErrUnavailable, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	args := append(bwrapArgs(DefaultLimits(), nil, withoutProgram), "--", truePath)
	cmd := exec.CommandContext(ctx, bwrap, args...)
	cmd.Env = []string{}
	cmd.Dir = "/"
	cmd.SysProcAttr = dropRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%w: bwrap cannot create a sandbox here (%s: %s); %s",
			ErrUnavailable, err, strings.TrimSpace(string(out)), installHint)
	}
	return nil
}

// lookBwrap finds the bwrap executable.
func lookBwrap() (string, error) {
	path, err := exec.LookPath("bwrap")
	if err != nil {
		return "", fmt.Errorf("%w: bwrap not found in PATH: %s", ErrUnavailable, installHint)
	}
	return path, nil
}

// runSandboxed runs program under bwrap, with prlimit setting the resource
// limits just before the interpreter starts.
func (r *Runner) runSandboxed(ctx context.Context, bwrap string, limits Limits, program string) (*Result, error) {
	py, err := findPython(ctx, r.Python)
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		return nil, fmt.Errorf("sandbox: prlimit (util-linux) not found: %w", err)
	}
	pipe, err := newProgramPipe()
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	defer pipe.close()

	args := bwrapArgs(limits, py.binds, withProgram)
	args = append(args, "--")
	args = append(args, prlimitArgs(prlimit, limits)...)
	args = append(args, py.path, "-I", "-B", "-u", programPath)
	cmd := exec.Command(bwrap, args...)
	cmd.Env = []string{}
	cmd.Dir = "/"
	cmd.SysProcAttr = dropRoot()
	cmd.ExtraFiles = []*os.File{pipe.r} // fd 3 in bwrap
	res, err := execute(ctx, cmd, limits.Timeout, func() error { return pipe.feed(program) })
	if err != nil {
		return res, fmt.Errorf("sandbox: %w", err)
	}
	if err := toolFailure(res); err != nil {
		return res, fmt.Errorf("sandbox: %w", err)
	}
	bwrapSignal(res)
	return res, nil
}

// Whether bwrapArgs adds the program's file to the sandbox.
const (
	withProgram    = true
	withoutProgram = false
)

// bwrapArgs builds the sandbox: every namespace unshared (so no network but
// a private loopback), uid and gid 65534 with no capabilities and no way to
// make further user namespaces, a cleared environment, read-only system
// directories, a fresh /proc and /dev, and size-limited /tmp and /dev/shm
// as the only writable places. With a program, fd 3 is copied to
// programPath.
func bwrapArgs(limits Limits, binds []string, program bool) []string {
	path := "/usr/local/bin:/usr/bin:/bin"
	for _, b := range binds {
		path = b + "/bin:" + path
	}
	args := []string{
		"--unshare-all", "--unshare-user", "--disable-userns",
		"--uid", strconv.Itoa(nobody), "--gid", strconv.Itoa(nobody),
		"--hostname", "sandbox", "--die-with-parent", "--new-session",
		"--cap-drop", "ALL", "--clearenv",
		"--setenv", "PATH", path, "--setenv", "HOME", "/tmp", "--setenv", "LANG", "C.UTF-8",
	}
	args = append(args, systemDirArgs()...)
	for _, f := range systemFiles {
		args = append(args, "--ro-bind-try", f, f)
	}
	for _, b := range binds {
		args = append(args, "--ro-bind", b, b)
	}
	args = append(args, "--proc", "/proc", "--dev", "/dev",
		"--size", strconv.FormatInt(limits.MaxFileBytes, 10), "--tmpfs", "/dev/shm",
		"--remount-ro", "/dev",
		"--size", strconv.FormatInt(4*limits.MaxFileBytes, 10), "--tmpfs", "/tmp")
	if program {
		args = append(args, "--perms", "0444", "--file", "3", programPath)
	}
	// The root and /dev are tmpfs without a size limit; only /tmp and
	// /dev/shm, which are bounded, stay writable.
	return append(args, "--remount-ro", "/", "--chdir", "/tmp")
}

// systemDirArgs mirrors each system directory that exists on the host: a
// symlink as the same symlink, a directory as a read-only bind.
func systemDirArgs() []string {
	var args []string
	for _, dir := range systemDirs {
		info, err := os.Lstat(dir)
		switch {
		case err != nil:
			continue
		case info.Mode()&os.ModeSymlink != 0:
			if target, err := os.Readlink(dir); err == nil {
				args = append(args, "--symlink", target, dir)
			}
		case info.IsDir():
			args = append(args, "--ro-bind", dir, dir)
		}
	}
	return args
}

// bwrapSignal decodes bwrap's report of a program killed by a signal: bwrap
// exits with 128 plus the signal number, as a shell does.
func bwrapSignal(res *Result) {
	if res.Killed || res.ExitCode <= 128 || res.ExitCode > 128+64 {
		return
	}
	res.Signal = signalName(syscall.Signal(res.ExitCode - 128))
	res.Killed = true
	res.ExitCode = -1
}

// dropRoot makes a root caller start the sandbox as uid and gid 65534, so
// that RLIMIT_NPROC applies (the kernel exempts host root from it) and no
// host privilege is carried into the sandbox. Other callers keep their ids.
func dropRoot() *syscall.SysProcAttr {
	if os.Geteuid() != 0 {
		return &syscall.SysProcAttr{}
	}
	return &syscall.SysProcAttr{Credential: &syscall.Credential{
		Uid: nobody, Gid: nobody, Groups: []uint32{},
	}}
}
