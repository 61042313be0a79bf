package runner_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"assay/internal/pgtest"
	"assay/runner"
	"assay/store"
	"assay/tally"
)

// BenchmarkSharedRun: three servers on one Postgres database (three
// managers, each with its own connections), a run launched on each at
// max_concurrent 200, every run shared by the three: 600 calls in flight
// in all. It prints the wall time against the ideal (a run's calls × the
// latency ÷ 200, the runs side by side) and the CPU of the three servers
// per call. They run in this process, so their CPU is counted together;
// Postgres and the fake model run beside them. At 50 ms a call the two
// cores cannot do the 12,000 calls a second the ideal asks; at 500 ms
// they can, and the same runs left each to the server that launched it
// show what the sharing itself costs. Beside each shared run it prints
// the floor under it on this machine: the same calls made by the client
// alone, 600 at a time, against the same fake model, with no engine and
// no database.
func BenchmarkSharedRun(b *testing.B) {
	for _, c := range []struct {
		latency time.Duration
		shared  bool
	}{{50 * time.Millisecond, true}, {500 * time.Millisecond, true}, {500 * time.Millisecond, false}} {
		name := "latency=" + c.latency.String()
		if !c.shared {
			name += "/alone"
		}
		b.Run(name, func(b *testing.B) { benchShared(b, c.latency, c.shared) })
	}
}

func benchShared(b *testing.B, latency time.Duration, shared bool) {
	const samples, servers, concurrency = 2000, 3, 200
	for range b.N {
		var floor *floorRun
		if shared {
			f := callFloor(b, true, servers*samples, servers*concurrency, latency)
			floor = &f
		}
		dir := b.TempDir()
		dsn := pgtest.DSN(b)
		srv := startFake(b, latency)
		cfg := benchConfig(b, dir, samples, srv.URL, concurrency, "")
		var managers []*runner.Manager
		for range servers {
			db, err := tally.Open(context.Background(), dsn)
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			m := runner.New(db, runner.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Program: "assay serve"})
			defer m.Close(context.Background())
			managers = append(managers, m)
		}
		var runs []*store.Run
		for _, m := range managers {
			run, err := m.CreateFromConfig(context.Background(), cfg)
			if err != nil {
				b.Fatal(err)
			}
			runs = append(runs, run)
		}
		cpu0, start := cpuTime(), time.Now()
		errs := make(chan error, servers)
		for i, m := range managers {
			if shared {
				m.Adopt(100 * time.Millisecond)
			}
			go func() {
				status, err := m.Execute(context.Background(), runs[i].ID)
				if err == nil && status != store.RunCompleted {
					err = fmt.Errorf("run %d ended %s", runs[i].ID, status)
				}
				errs <- err
			}()
		}
		for range servers {
			if err := <-errs; err != nil {
				b.Fatal(err)
			}
		}
		wall, cpu := time.Since(start), cpuTime()-cpu0
		calls, serverCPU := srv.stop(b)

		if calls != servers*2*samples {
			b.Fatalf("the fake model answered %d calls for %d tasks, an agent's and a judge's call each: tasks were done twice", calls, servers*samples)
		}
		ideal := time.Duration(calls/servers) * latency / concurrency
		r := engineRun{calls: calls, wall: wall, cpu: cpu, serverCPU: serverCPU, ideal: ideal}
		b.ReportMetric(r.wallRatio(), "wall/ideal")
		b.ReportMetric(r.perCall(cpu), "cpu-ms/call")
		how := fmt.Sprintf("%d runs shared by %d servers", servers, servers)
		if !shared {
			how = fmt.Sprintf("%d runs, each on the one of %d servers that launched it,", servers, servers)
		}
		fmt.Printf("%s on Postgres, %d samples each at %s, max_concurrent %d each (%d calls in flight in all): %d calls in %.2f s, wall/ideal %.2f (target ≤ 1.15), CPU %.3f ms per call for the three servers (the fake model beside them: %.3f)\n",
			how, samples, latency, concurrency, servers*concurrency, calls, wall.Seconds(), r.wallRatio(), r.perCall(cpu), r.perCall(serverCPU))
		if floor != nil {
			fmt.Printf("  the floor: the same %d calls made by the client alone, %d in flight, no engine and no database: %.2f s, wall/ideal %.2f, CPU %.3f ms per call (the fake model: %.3f); the servers took %.2f × the floor's time\n",
				floor.calls, floor.concurrency, floor.wall.Seconds(), floor.wallRatio(), floor.perCall(), floor.serverPerCall(), float64(wall)/float64(floor.wall))
		}
	}
}
