package readmodel

import (
	"assay/report"
	"assay/templates"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// RoutingView fills the page's figures and charts from a replay.
func RoutingView(v *templates.RoutingView, res *report.Routing, shareOf string) {
	v.Samples, v.LeftOut, v.Orders, v.Condition = res.Samples, res.LeftOut, res.Orders, res.Condition
	for _, a := range res.Algorithms {
		row := templates.RoutingRow{Name: a.Name, Quality: fmt.Sprintf("%.3f", a.Quality),
			QualityCI: fmt.Sprintf("%.3f – %.3f", a.QualityCI95[0], a.QualityCI95[1]),
			Cost:      fmt.Sprintf("$%.6f", a.CostUSD), Latency: fmt.Sprintf("%.0f ms", a.LatencyMS),
			Reward: fmt.Sprintf("%.3f", a.Reward), RewardCI: fmt.Sprintf("%.3f – %.3f", a.RewardCI95[0], a.RewardCI95[1]),
			Regret: fmt.Sprintf("%.3f", a.Regret), Shares: strings.Join(a.Shares(), " · "), Saved: "—"}
		if a.CostSaved != nil {
			row.Saved = fmt.Sprintf("%.0f%%", 100**a.CostSaved)
		}
		v.Rows = append(v.Rows, row)
	}
	for _, m := range res.Models {
		v.Alone = append(v.Alone, templates.RoutingRow{Name: m.Name, Quality: fmt.Sprintf("%.3f", m.Quality),
			Cost: fmt.Sprintf("$%.6f", m.CostUSD), Latency: fmt.Sprintf("%.0f ms", m.LatencyMS), Reward: fmt.Sprintf("%.3f", m.Reward)})
	}
	v.Charts = []templates.ChartView{frontChart(res), curveChart(res, shareOf)}
	for _, a := range res.Algorithms {
		if a.Name == shareOf {
			v.Charts = append(v.Charts, shareChart(res, a))
		}
	}
}

func Number(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// joinPairs writes a map as sorted "KEY<sep>value" lines.
func joinPairs(m map[string]string, sep string) string {
	var b strings.Builder
	for _, k := range sortedKeys(m) {
		b.WriteString(k + sep + m[k] + "\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// FIFO keeps the last fifoSize values put, by key, forgetting the one put
// first when full: the searches of samples tables (paging through a
// search's matches asks for them again, and a search reads every response)
// and routing replays (a replay over a large run takes seconds).
type FIFO[K comparable, V any] struct {
	mu     sync.Mutex
	keys   []K
	values map[K]V
}

const fifoSize = 16

func (c *FIFO[K, V]) Get(key K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.values[key]
	return v, ok
}

func (c *FIFO[K, V]) Put(key K, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.values == nil {
		c.values = map[K]V{}
	}
	if _, ok := c.values[key]; !ok {
		c.keys = append(c.keys, key)
		if len(c.keys) > fifoSize {
			delete(c.values, c.keys[0])
			c.keys = c.keys[1:]
		}
	}
	c.values[key] = v
}

// MetricNamer names metrics for people: "factual adherence", after its
// evaluator only when the run has several ("arbiter · semantic").
func MetricNamer(metrics []report.Metric) func(report.Metric) string {
	evaluators := map[string]bool{}
	for _, m := range metrics {
		evaluators[m.Evaluator] = true
	}
	return func(m report.Metric) string {
		name := strings.ReplaceAll(m.Name, "_", " ")
		if len(evaluators) > 1 && m.Name != m.Evaluator {
			return m.Evaluator + " · " + name
		}
		return name
	}
}

// ConditionAnchor is the id of a condition's section on a sample page.
func ConditionAnchor(condition string) string {
	return "c-" + strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '-'
	}, condition)
}
