// Package pgtest gives tests a real Postgres: the server named by
// ASSAY_TEST_POSTGRES, or a throwaway cluster this process starts in a
// temporary folder (Debian's postgresql package: initdb and pg_ctl, run
// as the postgres user when the tests run as root) and stops when its
// tests end. Each test gets a database of its own.
package pgtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
)

// Env names a server for the tests to use instead of a cluster of their
// own: postgres://USER@HOST:PORT/DB?sslmode=disable, a user who may
// create databases.
const Env = "ASSAY_TEST_POSTGRES"

// Password is the postgres user's password in the tests' own cluster.
const Password = "assay-tests"

var (
	once    sync.Once
	server  string // the DSN of the server's maintenance database
	stop    func()
	initErr error
)

// Main runs a package's tests and stops the cluster they started, if any:
// call it from TestMain as os.Exit(pgtest.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
	if stop != nil {
		stop()
	}
	return code
}

// DSN returns the DSN of a new, empty database for this test, dropped
// when it ends. It fails the test when no Postgres can be had: the
// package is installed by .ci/deps, so a missing one is a fault, not a
// reason to skip.
func DSN(t testing.TB) string {
	t.Helper()
	once.Do(func() { server, stop, initErr = start() })
	if initErr != nil {
		t.Fatalf("postgres for the tests: %v", initErr)
	}
	name := "t_" + randomHex(8)
	ctx := context.Background()
	if err := admin(ctx, server, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("postgres for the tests: %v", err)
	}
	t.Cleanup(func() {
		// Connections the test left open (a server it killed) are ended with it.
		admin(ctx, server, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	})
	return withDatabase(server, name)
}

// Server returns the maintenance database's DSN of the tests' server.
func Server(t testing.TB) string {
	t.Helper()
	once.Do(func() { server, stop, initErr = start() })
	if initErr != nil {
		t.Fatalf("postgres for the tests: %v", initErr)
	}
	return server
}

func withDatabase(dsn, name string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return dsn
	}
	u.Path = "/" + name
	return u.String()
}

func admin(ctx context.Context, dsn, statement string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, statement)
	return err
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// start returns the server named by Env, or starts a cluster.
func start() (string, func(), error) {
	if dsn := os.Getenv(Env); dsn != "" {
		return dsn, nil, nil
	}
	c, err := newCluster()
	if err != nil {
		return "", nil, err
	}
	port, err := c.create()
	if err != nil {
		os.RemoveAll(c.dir)
		return "", nil, err
	}
	stop := func() {
		c.run("pg_ctl", "-D", c.data, "-m", "immediate", "-w", "stop")
		os.RemoveAll(c.dir)
	}
	watch(os.Getpid(), c.bin, c.data, c.dir, c.as)
	restart = func(fn func()) error {
		if err := c.run("pg_ctl", "-D", c.data, "-m", "fast", "-w", "stop"); err != nil {
			return err
		}
		fn()
		return c.start()
	}
	return fmt.Sprintf("postgres://postgres:%s@127.0.0.1:%d/postgres?sslmode=disable", Password, port), stop, nil
}

// cluster is a throwaway Postgres cluster: its programs, its folder (the
// data beneath it), the account it runs as and the options it starts with.
type cluster struct {
	bin, dir, data, opts string
	as                   *account
}

// newCluster makes the cluster's folder, one the postgres user can reach:
// the tests' own temporary folder may sit under a home it cannot enter.
func newCluster() (*cluster, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "assay-pg-")
	if err != nil {
		return nil, err
	}
	as, err := runAs()
	if err == nil && as != nil {
		err = os.Chown(dir, as.uid, as.gid)
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return &cluster{bin: bin, dir: dir, data: filepath.Join(dir, "data"), as: as}, nil
}

// run runs one of Postgres's programs in the cluster's folder, as the
// cluster's account.
func (c *cluster) run(name string, args ...string) error {
	cmd := exec.Command(filepath.Join(c.bin, name), args...)
	if c.as != nil {
		cmd = exec.Command("runuser", append([]string{"-u", c.as.name, "--", filepath.Join(c.bin, name)}, args...)...)
	}
	cmd.Dir = c.dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w\n%s", name, err, out)
	}
	return nil
}

// create makes the cluster and starts it on a free port, which it returns.
// C collation and UTF-8, as assay's own databases compare text; a password
// asked over TCP, as a team's server asks it.
func (c *cluster) create() (int, error) {
	pwfile := filepath.Join(c.dir, "pw")
	if err := os.WriteFile(pwfile, []byte(Password+"\n"), 0o644); err != nil {
		return 0, err
	}
	if err := c.run("initdb", "-D", c.data, "-U", "postgres", "--auth-local=trust", "--auth-host=scram-sha-256", "--pwfile", pwfile,
		"--encoding=UTF8", "--locale=C", "--no-sync"); err != nil {
		return 0, err
	}
	port, err := freePort()
	if err != nil {
		return 0, err
	}
	c.opts = fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300", port, c.dir)
	return port, c.start()
}

// start starts the cluster and waits until it takes connections.
func (c *cluster) start() error {
	return c.run("pg_ctl", "-D", c.data, "-o", c.opts, "-l", filepath.Join(c.dir, "log"), "-w", "-t", "120", "start")
}

// watch stops the cluster and removes its folder once the test process
// is gone without doing so itself: a test that panics, a binary killed at
// its timeout.
func watch(pid int, bin, data, dir string, as *account) {
	stop := filepath.Join(bin, "pg_ctl") + " -D " + data + " -m immediate stop"
	if as != nil {
		stop = "runuser -u " + as.name + " -- " + stop
	}
	script := fmt.Sprintf("while [ -d /proc/%d ]; do sleep 1; done; %s >/dev/null 2>&1; rm -rf %s", pid, stop, dir)
	cmd := exec.Command("sh", "-c", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if cmd.Start() == nil {
		cmd.Process.Release()
	}
}

// Restart stops the tests' own cluster and starts it again, for tests of
// a database that goes away mid-run; fn runs while it is stopped.
func Restart(t testing.TB, fn func()) {
	t.Helper()
	Server(t)
	if restart == nil {
		t.Fatalf("postgres for the tests: %s names a server this process cannot restart", Env)
	}
	if err := restart(fn); err != nil {
		t.Fatalf("restart postgres: %v", err)
	}
}

var restart func(fn func()) error

// binDir finds Debian's postgresql binaries, the newest version first.
func binDir() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", errors.New("initdb not found: install Debian's postgresql (make test-deps does), or set " + Env)
}

func version(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

type account struct {
	name     string
	uid, gid int
}

// runAs is the postgres user when the tests run as root (initdb refuses
// root), nil otherwise.
func runAs() (*account, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root, and no postgres user to run the cluster as: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &account{name: u.Username, uid: uid, gid: gid}, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// StoreEnv, set to postgres, runs a package's tests of the store against
// Postgres rather than SQLite files: make test runs the store's and the
// engine's suites both ways.
const StoreEnv = "ASSAY_TEST_STORE"

// OnPostgres reports whether the tests' databases are Postgres ones.
func OnPostgres() bool { return os.Getenv(StoreEnv) == "postgres" }

// Database is where a test's database is: a new Postgres database when
// OnPostgres, else a SQLite file in the test's folder.
func Database(t testing.TB) string {
	t.Helper()
	if OnPostgres() {
		return DSN(t)
	}
	return filepath.Join(t.TempDir(), "assay.db")
}

// SQLiteOnly skips a test of what SQLite alone has (its file and locks,
// its page size, its response index, its migrations from before Postgres
// was a store) when the tests run against Postgres, saying why.
func SQLiteOnly(t testing.TB, what string) {
	t.Helper()
	if OnPostgres() {
		t.Skip("SQLite's alone (" + what + "): the tests run against Postgres")
	}
}

// OpenRaw opens a test's database as database/sql does, beside the store,
// for a test to read rows behind its back: Postgres's driver for a DSN,
// else SQLite's (which the store registers). Write its statements with
// $1, $2…: both take them.
func OpenRaw(path string) (*sql.DB, error) {
	if strings.HasPrefix(path, "postgres://") {
		return sql.Open("pgx", path)
	}
	return sql.Open("sqlite", path)
}
