package readmodel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"assay/config"
	"assay/report"
	"assay/stats"
	"assay/store"
	"assay/templates"
)

// This file turns one sample's results into the plain view of its page.

const toolResultChars = 1200 // of a tool call's result on a sample page

// SampleConditions groups a sample's results by condition, in the run's order.
func SampleConditions(sc *Scope, results []store.Result) []templates.SampleConditionView {
	run := sc.Run
	judgeReps := max(sc.Run.Config.JudgeRepetitions, 1)
	render := renderFor(sc.Dataset.Kind)
	var out []templates.SampleConditionView
	for _, c := range run.Conditions {
		v := templates.SampleConditionView{Name: c.Name, Anchor: ConditionAnchor(c.Name)}
		var mine []store.Result
		for _, r := range results {
			if r.Condition == c.Name {
				mine = append(mine, r)
				v.Results = append(v.Results, resultView(r, judgeReps, render, judgedBy(sc.Run.Config)))
			}
		}
		if len(mine) > 0 {
			v.Metrics = sampleMetrics(mine, sc.Run.Config.Evaluators)
			out = append(out, v)
		}
	}
	return out
}

// sampleMetrics is each metric's mean ± standard deviation over the results,
// in report order.
func sampleMetrics(results []store.Result, evaluators []config.Evaluator) []templates.SampleMetric {
	var order []report.Metric
	values := map[report.Metric][]float64{}
	for _, r := range results {
		for _, j := range r.Judgements {
			for _, s := range j.Scores {
				m := report.Metric{Evaluator: j.Evaluator, Name: s.Metric}
				if sc, ok := config.Evaluator(j.Evaluator).Scale(); ok {
					m.Scale = sc
				}
				if _, ok := values[m]; !ok {
					order = append(order, m)
				}
				values[m] = append(values[m], s.Value)
			}
		}
	}
	report.Order(evaluators, order)
	out := make([]templates.SampleMetric, 0, len(order))
	name := MetricNamer(order)
	for _, m := range order {
		mean, std := stats.Describe(values[m])
		out = append(out, templates.SampleMetric{Label: name(m), Mean: fmt.Sprintf("%.2f", mean),
			Std: fmt.Sprintf("%.2f", std), N: len(values[m])})
	}
	return out
}

// shownKind is an error's kind as a page badges it: not at all when the
// kind says nothing more than the message.
func shownKind(k store.ErrorKind) string {
	if k == store.ErrorOther {
		return ""
	}
	return string(k)
}

func resultView(r store.Result, judgeReps int, render func(string) string, judged func(string) bool) templates.ResultView {
	v := templates.ResultView{
		Repetition: r.Repetition,
		Empty:      strings.TrimSpace(r.Response) == "",
		Error:      r.Error,
		ErrorKind:  shownKind(r.ErrorKind),
		TokensIn:   r.TokensIn,
		TokensOut:  r.TokensOut,
		Cost:       templates.USD(r.CostUSD),
		Latency:    millis(float64(r.LatencyMS)),
		Calls:      r.Attempts,
		Retries:    r.Retries,
	}
	if !v.Empty {
		v.Response, v.Source = render(r.Response), r.Response
	}
	for _, t := range r.ToolCalls {
		v.ToolCalls = append(v.ToolCalls, toolCallView(t))
	}
	for _, j := range r.Judgements {
		v.Judgements = append(v.Judgements, judgementView(j, judgeReps, judged))
	}
	v.Grids = judgeGrids(r.Judgements)
	return v
}

// judgeGrids sets side by side the scores of each evaluator that judged the
// answer more than once.
func judgeGrids(js []store.Judgement) []templates.JudgeGrid {
	var order []string
	byEvaluator := map[string][]store.Judgement{}
	for _, j := range js {
		if _, ok := byEvaluator[j.Evaluator]; !ok {
			order = append(order, j.Evaluator)
		}
		byEvaluator[j.Evaluator] = append(byEvaluator[j.Evaluator], j)
	}
	var out []templates.JudgeGrid
	for _, ev := range order {
		list := byEvaluator[ev]
		if len(list) < 2 {
			continue
		}
		g := templates.JudgeGrid{Evaluator: ev}
		var metrics []string
		for _, j := range list {
			g.Columns = append(g.Columns, strings.TrimSpace(fmt.Sprintf("%s #%d", j.Judge, j.JudgeRepetition+1)))
			for _, s := range j.Scores {
				if !slices.Contains(metrics, s.Metric) {
					metrics = append(metrics, s.Metric)
				}
			}
		}
		for _, m := range metrics {
			row := templates.JudgeGridRow{Metric: m}
			for _, j := range list {
				cell := templates.JudgeGridCell{}
				for _, s := range j.Scores {
					if s.Metric == m {
						cell = templates.JudgeGridCell{Has: true, Value: strconv.FormatFloat(s.Value, 'f', -1, 64), Reasoning: s.Reasoning}
					}
				}
				row.Cells = append(row.Cells, cell)
			}
			g.Rows = append(g.Rows, row)
		}
		out = append(out, g)
	}
	return out
}

func toolCallView(t store.ToolCall) templates.ToolCallView {
	v := templates.ToolCallView{
		Turn:     t.Turn,
		Server:   t.Server,
		Tool:     t.Tool,
		IsError:  t.IsError,
		Denied:   t.Denied,
		Duration: millis(t.DurationMS),
		Result:   t.Result,
		Thought:  t.Thought,
	}
	if t.Denied && t.DurationMS == 0 {
		v.Duration = "" // never run
	}
	if len(t.Arguments) > 0 && string(t.Arguments) != "null" && string(t.Arguments) != "{}" {
		var buf bytes.Buffer
		if json.Indent(&buf, t.Arguments, "", "  ") == nil {
			v.Arguments = buf.String()
		} else {
			v.Arguments = string(t.Arguments)
		}
	}
	if r := []rune(t.Result); len(r) > toolResultChars {
		v.Result, v.Clipped = string(r[:toolResultChars]), true
	}
	return v
}

func judgementView(j store.Judgement, judgeReps int, judged func(evaluator string) bool) templates.JudgementView {
	v := templates.JudgementView{
		Evaluator:  j.Evaluator,
		Repetition: j.JudgeRepetition + 1,
		JudgeName:  j.Judge,
		ShowRep:    judgeReps > 1,
		Judge:      judged(j.Evaluator),
		Error:      j.Error,
		Raw:        j.Raw,
		Detail:     j.Detail,
		Claims:     j.UnverifiedClaims,
		Cost:       templates.USD(j.CostUSD),
		Latency:    millis(float64(j.LatencyMS)),
		Tokens:     templates.Tokens(j.TokensIn) + " in / " + templates.Tokens(j.TokensOut) + " out",
	}
	if v.Judge && json.Valid([]byte(j.Raw)) {
		var buf bytes.Buffer
		if json.Indent(&buf, []byte(j.Raw), "", "  ") == nil {
			v.Raw = buf.String() // a judge's JSON reads better indented
		}
	}
	for _, s := range j.Scores {
		v.Scores = append(v.Scores, templates.ScoreView{ID: s.ID, Metric: s.Metric, Value: Score(s.Value), Reasoning: s.Reasoning})
	}
	return v
}

// Score formats a score: whole numbers as such, others with two decimals.
func Score(v float64) string {
	if v == float64(int64(v)) {
		return fmt.Sprint(int64(v))
	}
	return fmt.Sprintf("%.2f", v)
}

// millis formats a duration in milliseconds: 840 ms, 2.4 s.
func millis(ms float64) string {
	if ms < 1000 {
		return fmt.Sprintf("%.0f ms", ms)
	}
	return fmt.Sprintf("%.1f s", ms/1000)
}

// judgedBy tells the evaluators of a run that are judges: the built-in
// rubric and arbiter, and the run's own rubrics, named in scores by name.
func judgedBy(cfg *config.Config) func(string) bool {
	return func(evaluator string) bool {
		if config.Evaluator(evaluator).UsesJudge() {
			return true
		}
		_, ok := cfg.RubricNamed(evaluator)
		return ok
	}
}
