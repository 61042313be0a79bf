package runner

import (
	"context"
	"sort"

	"assay/runner/config"
	"assay/runner/stats"
	"assay/store"
)

// Summary is what a run measured, per condition and metric. Its JSON is what
// `assay run --json` prints, and scripts rely on its keys.
type Summary struct {
	RunID         int64              `json:"run_id"`
	Name          string             `json:"name"`
	Status        store.RunStatus    `json:"status"`
	Message       string             `json:"message,omitempty"`
	DatasetSHA256 string             `json:"dataset_sha256"`
	TotalTasks    int                `json:"total_tasks"`
	Results       int                `json:"results"`
	Errors        int                `json:"errors"`
	CostUSD       float64            `json:"cost_usd"`
	Conditions    []ConditionSummary `json:"conditions"`
}

// ConditionSummary is one condition's results and metrics.
type ConditionSummary struct {
	Name        string          `json:"name"`
	Results     int             `json:"results"`
	Errors      int             `json:"errors"`
	JudgeErrors int             `json:"judge_errors"`
	Retried     int             `json:"retried"`
	ToolCalls   int             `json:"tool_calls"`
	ToolErrors  int             `json:"tool_errors"`
	CostUSD     float64         `json:"cost_usd"`
	TokensIn    int             `json:"tokens_in"`
	TokensOut   int             `json:"tokens_out"`
	LatencyMS   float64         `json:"mean_latency_ms"`
	Metrics     []MetricSummary `json:"metrics"`
}

// MetricSummary is one metric under one condition. Std is over per-sample
// means; Stderr and CI95 treat a sample's repetitions as one cluster (CI95 clipped
// to the evaluator's scale, see ScaleOf); N counts
// the scores; RepetitionSpread is the mean per-sample std over repetitions.
type MetricSummary struct {
	Evaluator        string     `json:"evaluator"`
	Name             string     `json:"name"`
	Mean             float64    `json:"mean"`
	Std              float64    `json:"std"`
	Stderr           float64    `json:"stderr"`
	CI95             [2]float64 `json:"ci95"`
	N                int        `json:"n"`
	Samples          int        `json:"samples"`
	RepetitionSpread float64    `json:"repetition_spread"`
	Disagreement     float64    `json:"disagreement"`
}

// Summarize computes a run's summary from its stored scores.
func Summarize(ctx context.Context, db *store.DB, runID int64) (*Summary, error) {
	run, err := db.Run(ctx, runID)
	if err != nil {
		return nil, err
	}
	ds, err := db.Dataset(ctx, run.DatasetID)
	if err != nil {
		return nil, err
	}
	data, err := db.ReportData(ctx, runID)
	if err != nil {
		return nil, err
	}
	spec, err := config.Stored(run.Config)
	if err != nil {
		return nil, err
	}
	return SummaryOf(run, ds, spec.Evaluators, data.Conditions, data.Scores), nil
}

// SummaryOf computes a run's summary from data already loaded: the run, its
// dataset, its evaluators (which order its metrics), its per-condition
// progress and its scores as RunScores orders them.
func SummaryOf(run *store.Run, ds *store.Dataset, evaluators []config.Evaluator, progress []store.ConditionProgress, scores []store.ScoreRow) *Summary {
	s := &Summary{RunID: run.ID, Name: run.Name, Status: run.Status, Message: run.Error, DatasetSHA256: ds.SHA256,
		TotalTasks: run.TotalTasks}
	byName := map[string]store.ConditionProgress{}
	for _, p := range progress {
		byName[p.Condition] = p
	}
	grouped := groupScores(scores)
	order := metricOrder(evaluators, scores)
	for _, c := range run.Conditions {
		p := byName[c.Name]
		cs := ConditionSummary{Name: c.Name, Results: p.Done, Errors: p.Errors, JudgeErrors: p.JudgeErrors, Retried: p.Retries,
			ToolCalls: p.ToolCalls, ToolErrors: p.ToolErrors,
			CostUSD: p.CostUSD, TokensIn: p.TokensIn, TokensOut: p.TokensOut, LatencyMS: p.LatencyMS, Metrics: []MetricSummary{}}
		for _, mk := range order {
			if groups, ok := grouped[c.Name][mk]; ok {
				cs.Metrics = append(cs.Metrics, summarizeMetric(mk, groups))
			}
		}
		s.Results += p.Done
		s.Errors += p.Errors
		s.CostUSD += p.CostUSD
		s.Conditions = append(s.Conditions, cs)
	}
	return s
}

// metricKey names a metric of an evaluator.
type metricKey struct{ evaluator, metric string }

// groupScores groups scores by condition and metric, then by sample.
func groupScores(scores []store.ScoreRow) map[string]map[metricKey][][]float64 {
	out := map[string]map[metricKey][][]float64{}
	last := map[string]map[metricKey]int64{}
	for _, sc := range scores {
		mk := metricKey{sc.Evaluator, sc.Metric}
		if out[sc.Condition] == nil {
			out[sc.Condition] = map[metricKey][][]float64{}
			last[sc.Condition] = map[metricKey]int64{}
		}
		groups := out[sc.Condition][mk]
		if len(groups) == 0 || last[sc.Condition][mk] != sc.SampleID {
			groups = append(groups, nil)
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], sc.Value)
		out[sc.Condition][mk] = groups
		last[sc.Condition][mk] = sc.SampleID
	}
	return out
}

// metricOrder lists metrics in the run's evaluator order, then by the order a judge gives them.
func metricOrder(evaluators []config.Evaluator, scores []store.ScoreRow) []metricKey {
	rank := map[string]int{}
	for i, ev := range evaluators {
		rank[string(ev)] = i
	}
	seen := map[metricKey]bool{}
	var out []metricKey
	for _, sc := range scores {
		mk := metricKey{sc.Evaluator, sc.Metric}
		if !seen[mk] {
			seen[mk] = true
			out = append(out, mk)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].evaluator != out[j].evaluator {
			return rank[out[i].evaluator] < rank[out[j].evaluator]
		}
		return metricRank(out[i].metric) < metricRank(out[j].metric)
	})
	return out
}

// metricRank keeps each judge's metrics in the order its rubric gives them.
func metricRank(name string) int {
	for i, m := range []string{"factual_adherence", "completeness", "helpfulness_and_clarity", "semantic", "factuality", "overall"} {
		if m == name {
			return i
		}
	}
	return 100
}

func summarizeMetric(mk metricKey, groups [][]float64) MetricSummary {
	c := stats.Clustered(groups)
	lo, hi := ScaleOf(mk.evaluator)
	return MetricSummary{Evaluator: mk.evaluator, Name: mk.metric, Mean: c.Mean, Std: c.Std, Stderr: c.Stderr,
		CI95: [2]float64{max(c.CILo, lo), min(c.CIHi, hi)}, N: c.N, Samples: c.Samples,
		RepetitionSpread: stats.RepetitionSpread(groups), Disagreement: stats.Disagreement(groups)}
}

// ScaleOf is the range of an evaluator's scores: 1–5 for the rubric judge,
// 0–1 for the others. A confidence interval is clipped to it, since no mean
// can leave it.
func ScaleOf(evaluator string) (lo, hi float64) {
	if evaluator == string(config.EvalRubric) {
		return 1, 5
	}
	return 0, 1
}
