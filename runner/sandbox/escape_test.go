package sandbox

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Each test here is a program trying to get out of the sandbox; each must
// be contained.

// marked wraps program so that it, and every process it forks, carries
// marker in its command line, where survivorsOf can find it on the host.
func marked(program, marker string) string {
	return fmt.Sprintf("import os, sys\nos.execv(sys.executable, [sys.executable, '-I', '-u', '-c', %s, %s])\n",
		strconv.Quote(program), strconv.Quote(marker))
}

// newMarker returns a string unique to this test run.
func newMarker(t *testing.T) string {
	return fmt.Sprintf("assay-escape-%s-%d-%d", t.Name(), os.Getpid(), time.Now().UnixNano())
}

// survivorsAfter returns the host pids whose command line contains marker
// once they had up to ten seconds to go: the kernel tears a sandbox's pid
// namespace down when its first process is gone, which may be just after
// the run returns, and a busy machine takes a moment to reap a fork bomb.
func survivorsAfter(t *testing.T, marker string) []string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	pids := survivorsOf(t, marker)
	for len(pids) > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		pids = survivorsOf(t, marker)
	}
	return pids
}

// survivorsOf returns the host pids whose command line contains marker.
func survivorsOf(t *testing.T, marker string) []string {
	t.Helper()
	paths, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	var pids []string
	for _, p := range paths {
		cmdline, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(cmdline), marker) {
			pids = append(pids, filepath.Base(filepath.Dir(p)))
		}
	}
	return pids
}

func TestEscapeNetwork(t *testing.T) {
	requireSandbox(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Close()
			accepted <- struct{}{}
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	program := fmt.Sprintf(`import socket
for host, port in [("127.0.0.1", %d), ("1.1.1.1", 53), ("8.8.8.8", 443)]:
    try:
        socket.create_connection((host, port), timeout=1).close()
        print("CONNECTED", host)
    except OSError as e:
        print("blocked", host, e)
try:
    socket.getaddrinfo("example.com", 80)
    print("CONNECTED dns")
except OSError as e:
    print("blocked dns", e)
`, port)
	res := run(t, Limits{Timeout: 5 * time.Second}, program)
	if strings.Contains(res.Stdout, "CONNECTED") || strings.Count(res.Stdout, "blocked") != 4 {
		t.Errorf("network reachable from the sandbox:\n%s%s", res.Stdout, res.Stderr)
	}
	select {
	case <-accepted:
		t.Errorf("the host's listener accepted a connection from the sandbox")
	default:
	}
}

func TestEscapeReadHostFiles(t *testing.T) {
	requireSandbox(t)
	goMod, err := filepath.Abs("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	secrets := []string{goMod, filepath.Dir(goMod), home, "/etc/passwd", "/etc/hostname"}
	for _, p := range secrets[:3] {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("precondition: %s should exist on the host: %v", p, err)
		}
	}
	program := fmt.Sprintf(`import os
for p in %s:
    try:
        if os.path.isdir(p):
            print("VISIBLE", p, os.listdir(p))
        else:
            print("VISIBLE", p, open(p).read(80))
    except OSError as e:
        print("hidden", p, e)
for p in ["/usr/sandbox-write-test", "/sandbox-write-test"]:
    try:
        open(p, "w").write("x")
        print("VISIBLE wrote", p)
    except OSError as e:
        print("hidden", p, e)
`, pyList(secrets))
	res := run(t, Limits{Timeout: 5 * time.Second}, program)
	if strings.Contains(res.Stdout, "VISIBLE") || res.ExitCode != 0 {
		t.Errorf("host files reachable from the sandbox:\n%s%s", res.Stdout, res.Stderr)
	}
}

// pyList spells ss as a Python list of strings.
func pyList(ss []string) string {
	quoted := make([]string, len(ss))
	for i, s := range ss {
		quoted[i] = strconv.Quote(s)
	}
	return "[" + strings.Join(quoted, ", ") + "]"
}

func TestEscapeReadEnvironment(t *testing.T) {
	requireSandbox(t)
	const secret = "sk-assay-test-secret-4f1c"
	t.Setenv("OPENAI_API_KEY", secret)
	program := `import os, glob
print(sorted(os.environ.items()))
for p in glob.glob("/proc/*/environ"):
    try:
        print(p, open(p, "rb").read())
    except OSError as e:
        print(p, e)
`
	res := run(t, Limits{Timeout: 5 * time.Second}, program)
	if res.ExitCode != 0 || strings.Contains(res.Stdout+res.Stderr, secret) || strings.Contains(res.Stdout, "OPENAI_API_KEY") {
		t.Errorf("the caller's environment reached the sandbox:\n%s%s", res.Stdout, res.Stderr)
	}
}

func TestEscapeForkBomb(t *testing.T) {
	requireSandbox(t)
	marker := newMarker(t)
	bomb := "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"
	limits := Limits{Timeout: 2 * time.Second, MaxProcs: 32}
	start := time.Now()
	res := run(t, limits, marked(bomb, marker))
	if d := time.Since(start); d > limits.Timeout+3*time.Second {
		t.Errorf("fork bomb held the run for %v", d)
	}
	if !res.TimedOut {
		t.Errorf("fork bomb: TimedOut = false; result %+v", res)
	}
	if pids := survivorsAfter(t, marker); len(pids) > 0 {
		t.Errorf("fork bomb processes survive the run: %v", pids)
	}
}

func TestEscapeMemory(t *testing.T) {
	requireSandbox(t)
	tests := []struct{ name, program string }{
		{"one block", "x = bytearray(4 << 30)\nprint('ALLOCATED')"},
		{"growing", "blocks = []\nwhile True:\n    blocks.append(bytearray(16 << 20))"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := run(t, Limits{Timeout: 5 * time.Second, MemoryBytes: 256 << 20}, tt.program)
			contained := res.Killed || strings.Contains(res.Stderr, "MemoryError")
			if res.ExitCode == 0 || !contained || res.TimedOut {
				t.Errorf("allocation not stopped by the memory limit: %+v", res)
			}
		})
	}
}

func TestEscapeInfiniteLoop(t *testing.T) {
	requireSandbox(t)
	timeout := 2 * time.Second
	start := time.Now()
	res := run(t, Limits{Timeout: timeout}, "print('looping', flush=True)\nwhile True:\n    pass")
	elapsed := time.Since(start)
	if !res.TimedOut || !res.Killed || res.Signal != "SIGKILL" {
		t.Errorf("infinite loop: %+v, want TimedOut and Killed by SIGKILL", res)
	}
	if elapsed < timeout || elapsed > timeout+1500*time.Millisecond {
		t.Errorf("infinite loop returned after %v, want within %v + 1.5s", elapsed, timeout)
	}
	if res.Stdout != "looping\n" {
		t.Errorf("stdout before the kill = %q, want it kept", res.Stdout)
	}
}

func TestEscapeLargeFile(t *testing.T) {
	requireSandbox(t)
	program := `import os
with open("/tmp/big", "wb") as f:
    for _ in range(100):
        f.write(b"x" * (1 << 20))
print("WROTE", os.path.getsize("/tmp/big"))
`
	res := run(t, Limits{Timeout: 5 * time.Second, MaxFileBytes: 1 << 20}, program)
	if res.ExitCode == 0 || strings.Contains(res.Stdout, "WROTE") || !strings.Contains(res.Stderr, "File too large") {
		t.Errorf("a 100 MiB file was not stopped by a 1 MiB limit: %+v", res)
	}
}

func TestEscapeBackgroundProcess(t *testing.T) {
	requireSandbox(t)
	marker := newMarker(t)
	program := fmt.Sprintf(`import os, subprocess, sys
sleeper = "import time; time.sleep(60)"
subprocess.Popen([sys.executable, "-c", sleeper, %[1]q], start_new_session=True)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv(sys.executable, [sys.executable, "-c", sleeper, %[1]q])
    os._exit(0)
print("detached")
`, marker)
	res := run(t, Limits{Timeout: 5 * time.Second}, program)
	if res.ExitCode != 0 || res.Stdout != "detached\n" || res.TimedOut {
		t.Fatalf("program did not run as expected: %+v", res)
	}
	if pids := survivorsAfter(t, marker); len(pids) > 0 {
		t.Errorf("background processes outlive the run: %v", pids)
	}
}
