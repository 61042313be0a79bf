package eee

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"assay"
	"assay/config"
	"assay/internal/outfile"
	"assay/report"
	"assay/stats"
	"assay/store"
)

// rubricDescription is how k-eval describes its judge's scores.
const rubricDescription = "k-eval LLM-as-judge scoring: factual_adherence, completeness, helpfulness_and_clarity (each 1-5)"

// Name is the stem of a run's files: its name, the day it was created and
// its id, as k-eval names its own ({config}_{YYYYMMDD}_{id}).
func Name(run *store.Run) string {
	name := regexp.MustCompile(`[^A-Za-z0-9._-]+`).ReplaceAllString(run.Name, "-")
	name = strings.Trim(name, "-.")
	if name == "" {
		name = "run"
	}
	return fmt.Sprintf("%s_%s_run%d", name, run.CreatedAt.UTC().Format("20060102"), run.ID)
}

// Shape is the shape of the files written: k-eval's before 1.1 (raw_runs,
// what assay's eee export has written) or k-eval 1.1's (output.raw,
// reasoning_trace and answer_attribution, named as k-eval 1.1 names them).
type Shape int

// The shapes.
const (
	ShapeEEE     Shape = iota // NAME.json and NAME.jsonl, the official schema (Every Eval Ever)
	ShapeKEval                // NAME.json and NAME.detailed.jsonl, k-eval 1.1
	ShapeKEval10              // NAME.json and NAME.jsonl, k-eval before 1.1 (raw_runs)
)

// WriteFiles writes a run's two files into dir as NAME.json and NAME.jsonl
// (NAME.detailed.jsonl in k-eval's shape) and returns their paths. Each is
// written beside its destination and renamed into place, so that a failure
// never leaves half a file.
func WriteFiles(ctx context.Context, db *store.DB, runID int64, version, dir string, shape Shape, eeeVersion string) (aggregate, instances string, err error) {
	rep, err := report.Load(ctx, db, runID)
	if err != nil {
		return "", "", err
	}
	name := Name(rep.Run)
	aggregate, instances = filepath.Join(dir, name+".json"), filepath.Join(dir, name+".jsonl")
	named := filepath.Base(instances)
	switch {
	case shape == ShapeKEval:
		name = kevalName(rep)
		aggregate, instances = filepath.Join(dir, name+".json"), filepath.Join(dir, name+".detailed.jsonl")
		named = filepath.Base(instances)
	case shape == ShapeEEE && eeeVersion != OlderVersion:
		// The layout of the EEE repository, which names the instance file
		// by its path from the folder holding data/.
		stem := repositoryStem(rep)
		named = stem + "_samples.jsonl"
		aggregate, instances = filepath.Join(dir, filepath.FromSlash(stem)+".json"), filepath.Join(dir, filepath.FromSlash(named))
		if err := os.MkdirAll(filepath.Dir(aggregate), 0o755); err != nil {
			return "", "", err
		}
	}
	var agg any
	if err := writeAtomic(instances, func(w io.Writer) error {
		agg, err = write(ctx, db, rep, version, named, shape, eeeVersion, w)
		return err
	}); err != nil {
		return "", "", err
	}
	if err := writeAtomic(aggregate, func(w io.Writer) error {
		b, err := json.MarshalIndent(agg, "", "  ")
		if err != nil {
			return err
		}
		_, err = w.Write(append(b, '\n'))
		return err
	}); err != nil {
		os.Remove(instances)
		return "", "", err
	}
	return aggregate, instances, nil
}

func writeAtomic(path string, fn func(io.Writer) error) error {
	if err := outfile.Write(path, fn); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// Write writes a run's instance lines to w, one per sample and condition,
// reading a few hundred samples' results at a time, and returns its
// aggregate, which names the instance file instancesFile.
func Write(ctx context.Context, db *store.DB, rep *report.Report, version, instancesFile string, w io.Writer) (*Aggregate, error) {
	agg, err := write(ctx, db, rep, version, instancesFile, ShapeKEval10, "", w)
	if err != nil {
		return nil, err
	}
	return agg.(*Aggregate), nil
}

// write writes the instance lines of shape to w and returns the aggregate
// (an *Aggregate, or an *OfficialAggregate in the official shape).
func write(ctx context.Context, db *store.DB, rep *report.Report, version, instancesFile string, shape Shape, eeeVersion string, w io.Writer) (any, error) {
	hashed := &counting{w: w, sum: sha256.New()}
	ex := newExporter(rep, shape, eeeVersion)
	lines := &lineWriter{ex: ex, enc: json.NewEncoder(hashed), hashed: hashed, samples: sampleWindow{db: db, ctx: ctx, dataset: rep.Dataset.ID}}
	lines.enc.SetEscapeHTML(false)
	err := db.EachResult(ctx, rep.Run.ID, lines.add)
	if err == nil {
		err = lines.flush()
	}
	if err != nil {
		return nil, err
	}
	ts := strconv.FormatInt(ex.finished, 10)
	if shape == ShapeEEE {
		return ex.officialAggregate(rep.Config, version, ts, len(ex.seen), hashed.rows, instancesFile, fmt.Sprintf("%x", hashed.sum.Sum(nil))), nil
	}
	return ex.aggregate(rep.Config, version, ts, len(ex.seen), instancesFile), nil
}

// newExporter readies the export of a run's report in shape: its id, when
// it finished and how long it took, its conditions.
func newExporter(rep *report.Report, shape Shape, eeeVersion string) *exporter {
	run := rep.Run
	finished := time.Now()
	if run.FinishedAt != nil {
		finished = *run.FinishedAt
	}
	var elapsed float64
	if run.StartedAt != nil {
		elapsed = finished.Sub(*run.StartedAt).Seconds()
	}
	id := fmt.Sprintf("assay-run-%d-%d", run.ID, run.CreatedAt.Unix())
	if shape == ShapeKEval {
		id = runUUID(rep) // k-eval's run id, whose first 8 hex digits end its files' names
	}
	conds := map[string]assay.Condition{}
	for _, c := range run.Conditions {
		conds[c.Name] = c
	}
	return &exporter{rep: rep, id: id, finished: finished.Unix(), elapsed: elapsed, conds: conds, seen: map[int64]bool{}, shape: shape,
		eeeVersion: cmp.Or(eeeVersion, OfficialVersion)}
}

// sampleWindow reads the samples a window at a time as the results, which
// come in their samples' row order, reach them: never all at once.
type sampleWindow struct {
	db      *store.DB
	ctx     context.Context
	dataset int64
	window  []store.Sample
}

// at is the sample of row; nil when the dataset has none.
func (sw *sampleWindow) at(row int64) (*store.Sample, error) {
	if len(sw.window) == 0 || row < sw.window[0].ID || row > sw.window[len(sw.window)-1].ID {
		var err error
		if sw.window, err = sw.db.SamplesFromRow(sw.ctx, sw.dataset, row, 512); err != nil {
			return nil, err
		}
	}
	i, ok := slices.BinarySearchFunc(sw.window, row, func(s store.Sample, row int64) int { return cmp.Compare(s.ID, row) })
	if !ok {
		return nil, nil
	}
	return &sw.window[i], nil
}

// lineWriter gathers a sample's results under a condition and writes
// their lines: one per answer and metric (official), or one in all (k-eval's).
type lineWriter struct {
	ex      *exporter
	enc     *json.Encoder
	hashed  *counting
	samples sampleWindow
	group   []*store.Result
}

// add takes the next result, writing the group before it when it is of
// another sample or condition.
func (lw *lineWriter) add(r *store.Result) error {
	if len(lw.group) > 0 && (lw.group[0].SampleRow != r.SampleRow || lw.group[0].Condition != r.Condition) {
		if err := lw.flush(); err != nil {
			return err
		}
	}
	c := *r
	lw.group = append(lw.group, &c)
	return nil
}

// flush writes the group's lines.
func (lw *lineWriter) flush() error {
	if len(lw.group) == 0 {
		return nil
	}
	defer func() { lw.group = lw.group[:0] }()
	s, err := lw.samples.at(lw.group[0].SampleRow)
	if err != nil {
		return err
	}
	if s == nil {
		return fmt.Errorf("result of unknown sample row %d", lw.group[0].SampleRow)
	}
	if lw.ex.shape != ShapeEEE {
		lw.hashed.rows++
		return lw.enc.Encode(lw.ex.instance(s, lw.group))
	}
	lw.ex.seen[s.ID] = true
	for _, r := range lw.group {
		for _, line := range lw.ex.officialLines(s, r) {
			if err := lw.enc.Encode(line); err != nil {
				return err
			}
			lw.hashed.rows++
		}
	}
	return nil
}

// counting passes writes on, hashing them and counting the lines written.
type counting struct {
	w    io.Writer
	sum  hash.Hash
	rows int
}

func (c *counting) Write(p []byte) (int, error) {
	c.sum.Write(p)
	return c.w.Write(p)
}

type exporter struct {
	rep      *report.Report
	id       string
	finished int64
	elapsed  float64
	conds    map[string]assay.Condition
	seen     map[int64]bool // samples with results
	shape    Shape
	// eeeVersion is the official schema's version written (ShapeEEE).
	eeeVersion string
}

// modelID is the model evaluated: the configured one, else the one that
// answered most.
func (ex *exporter) modelID() string {
	if m := ex.rep.Config.Agent.Model; m != "" {
		return m
	}
	best, n := "", 0
	for _, m := range ex.rep.Models {
		if m.Results > n {
			best, n = m.Model, m.Results
		}
	}
	return best
}

func (ex *exporter) evaluationName(condition string) string {
	return ex.rep.Run.Name + "/" + condition
}

// instance is one sample under one condition.
func (ex *exporter) instance(s *store.Sample, results []*store.Result) Instance {
	ex.seen[s.ID] = true
	cond := results[0].Condition
	in := Instance{
		SchemaVersion: InstanceVersion, EvaluationID: ex.id, ModelID: ex.modelID(), EvaluationName: ex.evaluationName(cond),
		SampleIdx: SampleIdx(s.Ordinal - 1), InteractionType: "single_turn",
		Input: Input{Raw: s.Input, Reference: s.Reference}, Output: Output{RawRuns: []string{}},
	}
	if len(ex.conds[cond].MCPServers) > 0 || ex.rep.Config.Agent.Type.RunsProgram() {
		in.InteractionType = "agentic"
	}
	sums := instanceSums{values: map[string][]float64{}, reasonings: map[string][]string{}}
	for _, m := range ex.rep.Metrics {
		sums.reasonings[m.Name] = []string{}
	}
	for _, r := range results {
		in.Output.RawRuns = append(in.Output.RawRuns, r.Response)
		in.RunDetails = append(in.RunDetails, ex.runDetail(r, &sums))
	}
	in.Evaluation = Evaluation{Details: ex.instanceDetails(s, &sums)}
	in.TokenUsage = TokenUsage{InputTokens: &sums.tokensIn, OutputTokens: &sums.tokensOut}
	if ex.shape == ShapeKEval {
		keval11(&in, results)
	}
	return in
}

// instanceSums is what an instance's repetitions add up to.
type instanceSums struct {
	tokensIn, tokensOut, errors int
	claims                      []string
	values                      map[string][]float64 // every score, by metric
	reasonings                  map[string][]string  // a reasoning per repetition, by metric
}

// runDetail is one repetition of an instance, added to its sums.
func (ex *exporter) runDetail(r *store.Result, sums *instanceSums) Run {
	sums.tokensIn += r.TokensIn
	sums.tokensOut += r.TokensOut
	cost, latency, turns := r.CostUSD, r.LatencyMS, turnsOf(r)
	run := Run{RepetitionIndex: r.Repetition - 1, AgentResponse: r.Response, CostUSD: &cost, DurationMS: &latency,
		NumTurns: &turns, Scores: map[string]*float64{}, Error: r.Error}
	if r.Error != "" {
		run.ErrorKind = string(r.ErrorKind)
		sums.errors++
	}
	perRun := map[string][]float64{}
	reasoning := map[string]string{}
	for _, j := range r.Judgements {
		if j.Error != "" && run.JudgeError == "" {
			run.JudgeError = j.Evaluator + ": " + j.Error
		}
		for _, c := range j.UnverifiedClaims {
			if !slices.Contains(sums.claims, c) {
				sums.claims = append(sums.claims, c)
			}
		}
		for _, sc := range j.Scores {
			perRun[sc.Metric] = append(perRun[sc.Metric], sc.Value)
			sums.values[sc.Metric] = append(sums.values[sc.Metric], sc.Value)
			if _, ok := reasoning[sc.Metric]; !ok || j.JudgeRepetition == 0 {
				reasoning[sc.Metric] = sc.Reasoning
			}
		}
	}
	for _, m := range ex.rep.Metrics {
		run.Scores[m.Name] = nil
		if v := perRun[m.Name]; len(v) > 0 {
			mean := report.Mean(v)
			run.Scores[m.Name] = &mean
		}
		sums.reasonings[m.Name] = append(sums.reasonings[m.Name], reasoning[m.Name])
	}
	return run
}

// instanceDetails is an instance's evaluation details: each metric's mean,
// spread and reasonings over its repetitions, and what they say together.
func (ex *exporter) instanceDetails(s *store.Sample, sums *instanceSums) map[string]any {
	details := map[string]any{"evaluation_timestamp": ex.finished, "elapsed_seconds": round(ex.elapsed, 1),
		"sample_id": s.SampleID}
	evaluators := map[string]string{}
	for _, m := range ex.rep.Metrics {
		evaluators[m.Name] = m.Evaluator
		details[m.Name+"_mean"], details[m.Name+"_stddev"] = nil, nil
		if v := sums.values[m.Name]; len(v) > 0 {
			details[m.Name+"_mean"], details[m.Name+"_stddev"] = stats.Describe(v)
		}
		details[m.Name+"_reasonings"] = sums.reasonings[m.Name]
	}
	details["unverified_claims"] = nonNil(sums.claims)
	details["errors"] = sums.errors
	details["evaluators"] = evaluators
	return details
}

// keval11 puts an instance in k-eval 1.1's shape: the first repetition's
// answer as output.raw with its reasoning trace (what the agent wrote
// before its tool calls, joined), and under answer_attribution each
// repetition's steps — what the agent wrote in a turn (not terminal), that
// turn's MCP tool calls — then its answer; agentic when a tool was called.
func keval11(in *Instance, results []*store.Result) {
	in.Output = Output{Raw: in.Output.RawRuns[0]}
	in.InteractionType = "single_turn"
	in.AnswerAttribution = []Attribution{}
	var traces []map[string]any
	for i, r := range results {
		rep := r.Repetition - 1
		steps, trace := kevalSteps(r, rep)
		in.AnswerAttribution = append(in.AnswerAttribution, steps...)
		if len(r.ToolCalls) > 0 {
			in.InteractionType = "agentic"
		}
		in.RunDetails[i].ReasoningTrace = &trace
		traces = append(traces, map[string]any{"repetition_index": rep, "reasoning_trace": trace})
		if i == 0 {
			in.Output.ReasoningTrace = &trace
		}
	}
	in.Evaluation.Details["reasoning_traces"] = traces
}

// kevalSteps are a repetition's answer_attribution entries, as k-eval
// writes them, and its reasoning trace: the agent's words before its calls.
func kevalSteps(r *store.Result, rep int) ([]Attribution, string) {
	var out []Attribution
	var thoughts []string
	last := 0
	for _, tc := range r.ToolCalls {
		if tc.Thought != "" {
			thoughts = append(thoughts, tc.Thought)
			out = append(out, Attribution{RepetitionIndex: rep, TurnIdx: tc.Turn, Source: "agent_reasoning",
				ExtractedValue: tc.Thought, ExtractionMethod: "text_generation"})
		}
		name := tc.Tool
		if tc.Server != "" {
			name = "mcp__" + tc.Server + "__" + tc.Tool
		}
		out = append(out, Attribution{RepetitionIndex: rep, TurnIdx: tc.Turn, Source: "mcp_tool",
			ExtractedValue: tc.Result, ExtractionMethod: "tool_call", ToolName: name, ToolInput: toolInput(tc.Arguments),
			ToolError: json.RawMessage(strconv.FormatBool(tc.IsError)), DurationMS: durationMS(tc)})
		last = max(last, tc.Turn)
	}
	out = append(out, Attribution{RepetitionIndex: rep, TurnIdx: last + 1, Source: "agent_reasoning",
		ExtractedValue: r.Response, ExtractionMethod: "text_generation", IsTerminal: true})
	return out, strings.Join(thoughts, " ")
}

// toolInput is a tool call's arguments as k-eval writes tool_input: an
// object ({} for none; arguments not an object under "arguments").
func toolInput(args json.RawMessage) json.RawMessage {
	t := bytes.TrimSpace(args)
	switch {
	case len(t) == 0 || string(t) == "null":
		return json.RawMessage("{}")
	case t[0] == '{':
		return t
	}
	b, _ := json.Marshal(map[string]json.RawMessage{"arguments": t})
	return b
}

// durationMS is a tool call's duration_ms as k-eval writes it: a float of
// milliseconds, null for a call that got no answer.
func durationMS(tc store.ToolCall) json.RawMessage {
	if tc.DurationMS == 0 && tc.Result == "" {
		return json.RawMessage("null")
	}
	return json.RawMessage(strconv.FormatFloat(tc.DurationMS, 'f', -1, 64))
}

// aggregate is the run's aggregate file: one evaluation result per condition.
func (ex *exporter) aggregate(cfg *config.Config, version, ts string, samples int, instancesFile string) *Aggregate {
	model := ex.modelID()
	agg := &Aggregate{
		SchemaVersion: AggregateVersion, EvaluationID: ex.id, RetrievedTimestamp: ts,
		SourceMetadata: SourceMetadata{SourceName: "assay", SourceType: "evaluation_run", SourceOrganization: "assay", EvaluatorRelationship: "self"},
		ModelInfo:      ModelInfo{ID: model, Name: model},
		EvalLibrary:    EvalLibrary{Name: "assay", Version: version},
		Detailed:       Detailed{FilePath: &instancesFile, Format: "jsonl", Checksum: ex.rep.Dataset.SHA256},
	}
	mc := metricConfig(ex.rep.Metrics)
	for _, c := range ex.rep.Summary.Conditions {
		d := map[string]any{"results": c.Results, "errors": c.Errors, "judge_errors": c.JudgeErrors, "cost_usd": c.CostUSD,
			"tokens_in": c.TokensIn, "tokens_out": c.TokensOut, "mean_latency_ms": c.LatencyMS}
		evaluators := map[string]string{}
		for _, m := range c.Metrics {
			d[m.Name+"_mean"] = m.Mean
			d[m.Name+"_stddev"] = m.RepetitionSpread
			d[m.Name+"_std_over_samples"] = m.Std
			d[m.Name+"_stderr"] = m.Stderr
			d[m.Name+"_ci95"] = m.CI95
			d[m.Name+"_n"] = m.N
			evaluators[m.Name] = m.Evaluator
		}
		d["evaluators"] = evaluators
		gen := map[string]any{"judge_temperature": cfg.Judge.Temperature, "judge_model": cfg.Judge.Model,
			"num_repetitions": ex.rep.Run.Repetitions}
		if cfg.Agent.Temperature != nil {
			gen["temperature"] = *cfg.Agent.Temperature
		}
		agg.EvaluationResults = append(agg.EvaluationResults, EvaluationResult{
			EvaluationName:      ex.evaluationName(c.Name),
			EvaluationTimestamp: ts,
			SourceData:          SourceData{SourceType: "jsonl_file", DatasetSHA256: ex.rep.Dataset.SHA256, SamplesNumber: samples},
			MetricConfig:        mc,
			ScoreDetails:        ScoreDetails{Details: d},
			GenerationConfig:    gen,
		})
	}
	return agg
}

// metricConfig describes the run's metrics: k-eval's words for its judge,
// else each evaluator with its metrics and scale.
func metricConfig(metrics []report.Metric) MetricConfig {
	mc := MetricConfig{ScoreType: "composite", MinScore: 1, MaxScore: 5}
	byEval := map[string][]string{}
	var order []string
	lo, hi := 5.0, 0.0
	for _, m := range metrics {
		if _, ok := byEval[m.Evaluator]; !ok {
			order = append(order, m.Evaluator)
		}
		byEval[m.Evaluator] = append(byEval[m.Evaluator], m.Name)
		l, h := m.Scale.Bounds()
		lo, hi = min(lo, l), max(hi, h)
	}
	if len(order) == 1 && order[0] == string(config.EvalRubric) {
		mc.EvaluationDescription = rubricDescription
		return mc
	}
	var parts []string
	for _, e := range order {
		parts = append(parts, e+" ("+strings.Join(byEval[e], ", ")+")")
	}
	mc.EvaluationDescription = "assay evaluators: " + strings.Join(parts, "; ")
	if len(metrics) > 0 {
		mc.MinScore, mc.MaxScore = lo, hi
	}
	return mc
}

func round(v float64, d int) float64 { return report.Round(v, d) }

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// turnsOf is an answer's turns: as the agent counted them (Claude Code's
// num_turns), else its model calls without the retries.
func turnsOf(r *store.Result) int {
	if r.Turns > 0 {
		return r.Turns
	}
	return max(r.Attempts-len(r.Retries), 1)
}
