package gate

import (
	"fmt"
	"slices"

	"assay/report"
)

// Comparison is a run compared with its baseline, condition by condition
// and metric by metric, paired by sample.
type Comparison struct {
	BaselineRunID int64        `json:"baseline_run_id"`
	Tolerance     float64      `json:"tolerance"`
	Metrics       []Difference `json:"metrics"`
	Regressions   int          `json:"regressions"`
	// Unmatched names the conditions only one of the runs has.
	Unmatched []string `json:"unmatched_conditions,omitempty"`
}

// Difference is the run minus its baseline on one metric under one
// condition, over the samples both scored: the paired mean difference with
// its bootstrap 95% CI. It is a regression when the whole CI lies below
// −tolerance.
type Difference struct {
	Condition string     `json:"condition"`
	Metric    string     `json:"metric"` // evaluator.name
	Baseline  float64    `json:"baseline_mean"`
	Mean      float64    `json:"mean"`
	Diff      float64    `json:"diff"`
	CI95      [2]float64 `json:"ci95"`
	N         int        `json:"n"` // samples scored in both runs
	Wins      int        `json:"wins"`
	Ties      int        `json:"ties"`
	Losses    int        `json:"losses"`
	Regressed bool       `json:"regressed"`
}

// Compare compares run with base, which must be on the same dataset bytes
// and share at least one condition and metric.
func Compare(base, run *report.Report, tolerance float64) (*Comparison, error) {
	if base.Dataset.SHA256 != run.Dataset.SHA256 {
		return nil, fmt.Errorf("baseline run %d is on another dataset (%s, SHA-256 %.12s…) than run %d (%s, %.12s…): only runs of the same dataset bytes can be compared",
			base.Run.ID, base.Dataset.Name, base.Dataset.SHA256, run.Run.ID, run.Dataset.Name, run.Dataset.SHA256)
	}
	var metrics []report.Metric
	for _, m := range run.Metrics {
		if base.MetricIndex(m.Evaluator, m.Name) >= 0 {
			metrics = append(metrics, m)
		}
	}
	c := &Comparison{BaselineRunID: base.Run.ID, Tolerance: tolerance}
	var shared []string
	for _, name := range run.Conditions {
		if base.HasCondition(name) {
			shared = append(shared, name)
		} else {
			c.Unmatched = append(c.Unmatched, name+" (not in the baseline)")
		}
	}
	for _, name := range base.Conditions {
		if !run.HasCondition(name) {
			c.Unmatched = append(c.Unmatched, name+" (only in the baseline)")
		}
	}
	if len(shared) == 0 {
		return nil, fmt.Errorf("baseline run %d shares no condition with run %d", base.Run.ID, run.Run.ID)
	}
	if len(metrics) == 0 {
		return nil, fmt.Errorf("baseline run %d shares no metric with run %d", base.Run.ID, run.Run.ID)
	}
	for _, name := range shared {
		for _, p := range report.ComparePaired(metrics, base.SideFor(name, metrics), run.SideFor(name, metrics)) {
			d := Difference{
				Condition: name, Metric: metricName(p.Metric), Baseline: p.MeanA, Mean: p.MeanB,
				Diff: p.MeanDiff, CI95: [2]float64{p.CILo, p.CIHi}, N: p.N, Wins: p.Wins, Ties: p.Ties, Losses: p.Losses,
			}
			d.Regressed = d.N > 0 && d.CI95[1] < -tolerance
			if d.Regressed {
				c.Regressions++
			}
			c.Metrics = append(c.Metrics, d)
		}
	}
	return c, nil
}

// Regressed lists the differences that are regressions.
func (c *Comparison) Regressed() []Difference {
	return slices.DeleteFunc(slices.Clone(c.Metrics), func(d Difference) bool { return !d.Regressed })
}

// Message describes a difference in one line.
func (d Difference) Message() string {
	if d.N == 0 {
		return fmt.Sprintf("%s: %s: no sample scored in both runs", d.Condition, d.Metric)
	}
	regressed := "no regression"
	if d.Regressed {
		regressed = "REGRESSED"
	}
	return fmt.Sprintf("%s: %s %s → %s, diff %s, 95%% CI [%s, %s], n %d (%d better, %d same, %d worse): %s",
		d.Condition, d.Metric, num(d.Baseline), num(d.Mean), signed(d.Diff), signed(d.CI95[0]), signed(d.CI95[1]), d.N,
		d.Wins, d.Ties, d.Losses, regressed)
}

func signed(v float64) string {
	s := num(v)
	if v > 0 && s != "0" {
		return "+" + s
	}
	return s
}
