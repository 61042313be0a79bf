package route

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"testing"
	"time"
)

// BenchmarkReplay replays every algorithm over 200 orders of a GSM8K-sized
// matrix: 1,319 samples × 6 models. It prints the time and the heap the
// replay allocated on one core (target: under 3 s, memory under 200 MB),
// then the time with every core, the algorithms side by side.
func BenchmarkReplay(b *testing.B) {
	models := []string{"m1", "m2", "m3", "m4", "m5", "m6"}
	m := matrixOf(1319, models,
		func(i, a int) float64 { return math.Mod(float64(i*(a+7))*0.61, 1) },
		func(i, a int) float64 { return 0.0002 * float64(a+1) * (1 + float64(i%5)) },
		func(i, a int) float64 { return 200 * float64(a+1) },
		func(i int) []float64 {
			return Features(fmt.Sprintf("A question about topic %d with %d words", i%37, i%11), map[string]any{"subject": i % 7})
		})
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		if _, err := Replay(context.Background(), m, Options{Orders: DefaultOrders, Seed: 1, Weights: DefaultWeights}); err != nil {
			b.Fatal(err)
		}
	}
	elapsed := time.Since(start) / time.Duration(b.N)
	runtime.ReadMemStats(&after)
	fmt.Printf("replay of 1,319 samples × 6 models × %d algorithms × %d orders: %s on one core, %.1f MB allocated\n",
		len(Algorithms), DefaultOrders, elapsed.Round(time.Millisecond), float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/(1<<20))
	runtime.GOMAXPROCS(prev)
	start = time.Now()
	if _, err := Replay(context.Background(), m, Options{Orders: DefaultOrders, Seed: 1, Weights: DefaultWeights}); err != nil {
		b.Fatal(err)
	}
	fmt.Printf("the same on %d cores: %s\n", prev, time.Since(start).Round(time.Millisecond))
}
