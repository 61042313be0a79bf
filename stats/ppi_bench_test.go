package stats

import (
	"fmt"
	"testing"
)

// BenchmarkActiveReviews prints how many reviews drawn in the active order
// give the interval width 100 uniform draws give, on simulated runs of
// 1,000 samples whose judge errs as much as its panel's spread says
// (target: at least 30% fewer, coverage at least 93%), and the widths
// when the spread predicts nothing.
func BenchmarkActiveReviews(b *testing.B) {
	const runs = 400
	for range b.N {
		uniform, uCovered := meanWidth(1, runs, 100, false, true)
		needed, covered := 100, uCovered
		for m := 40; m <= 100; m += 2 {
			if w, c := meanWidth(1, runs, m, true, true); w <= uniform {
				needed, covered = m, c
				break
			}
		}
		u0, _ := meanWidth(2, runs, 100, false, false)
		a0, c0 := meanWidth(2, runs, 100, true, false)
		fmt.Printf("reviews for the width of 100 uniform draws (%.3f, covering the truth in %.1f%% of %d runs): %d in the active order (%.0f%% fewer; target ≥ 30%%), covering it in %.1f%%; "+
			"where the spread predicts nothing, 100 reviews give %.3f uniform and %.3f active (%+.0f%%), covering it in %.1f%%\n",
			uniform, 100*float64(uCovered)/runs, runs, needed, 100-float64(needed), 100*float64(covered)/runs, u0, a0, 100*(a0/u0-1), 100*float64(c0)/runs)
		b.ReportMetric(float64(needed), "active-reviews")
	}
}
