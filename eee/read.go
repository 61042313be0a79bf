package eee

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"assay"
	"assay/config"
	"assay/store"
)

var sha256Hex = regexp.MustCompile(`^[0-9a-f]{64}$`)

// Files are the two files of a run, with the names errors give them. The
// instances, a line per sample and condition with every repetition's
// answer and reasoning, are read twice, a line at a time: to check them and
// rebuild the samples, then as the results are stored. Held whole, a
// 150,000-result run's (445 MB) took 2.7 GB to import.
type Files struct {
	ResultsName, InstancesName string
	Results                    []byte
	Instances                  Source
}

// Source is a file read once per pass.
type Source struct {
	Open func() (io.ReadCloser, error)
	Size int64
}

// Bytes is a source of bytes in memory (an upload).
func Bytes(data []byte) Source {
	return Source{Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }, Size: int64(len(data))}
}

// File is the source of the file at path.
func File(path string) (Source, error) {
	info, err := os.Stat(path)
	if err != nil {
		return Source{}, err
	}
	if !info.Mode().IsRegular() {
		return Source{}, fmt.Errorf("%s is not a regular file", path)
	}
	if info.Size() > MaxInstancesBytes {
		return Source{}, assay.Errorf(assay.ETOOLARGE, "%s is %d MiB; an instances file may be at most %d MiB (the run it holds is read into memory to be stored in one transaction)",
			path, info.Size()>>20, MaxInstancesBytes>>20)
	}
	return Source{Open: func() (io.ReadCloser, error) { return os.Open(path) }, Size: info.Size()}, nil
}

// MaxInstancesBytes bounds an instances file read from disk; an upload is
// bounded by the server's upload limit.
const MaxInstancesBytes = 256 << 20

// maxLine bounds a line of the instances: a sample under a condition with
// every repetition's answer and reasoning.
const maxLine = 64 << 20

// eachLine calls fn with each line of src that is not blank, numbered from 1.
func eachLine(src Source, name string, fn func(line int, raw []byte) error) error {
	rc, err := src.Open()
	if err != nil {
		return err
	}
	defer rc.Close()
	sc := bufio.NewScanner(rc)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	line := 0
	for sc.Scan() {
		line++
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		if err := fn(line, sc.Bytes()); err != nil {
			return err
		}
	}
	if errors.Is(sc.Err(), bufio.ErrTooLong) {
		return fmt.Errorf("%s:%d: the line is over %d MiB", name, line+1, maxLine>>20)
	} else if sc.Err() != nil {
		return fmt.Errorf("%s: %w", name, sc.Err())
	}
	return nil
}

// Read checks the files and turns them into a run to import: the samples
// rebuilt from the instances, and the results — a result per repetition
// with its scores and the judge's reasoning — read again as they are
// stored (RunImport.EachResult). An error names the file and line.
func Read(f Files) (*store.RunImport, error) {
	if official(f.Results) {
		return readOfficial(f)
	}
	agg, err := readAggregate(f.ResultsName, f.Results)
	if err != nil {
		return nil, err
	}
	r := &reader{files: f, agg: agg, conditions: map[string]bool{}, seen: map[key]int{}, samples: map[int]*store.Sample{},
		evaluatorOf: map[string]string{}}
	for i, e := range agg.EvaluationResults {
		if err := r.condition(fmt.Sprintf("%s: evaluation_results[%d]", f.ResultsName, i), e); err != nil {
			return nil, err
		}
	}
	r.extra.keepResults(f.Results, agg)
	r.keepExtra = true
	err = r.readInstances()
	r.keepExtra = false
	if err != nil {
		return nil, err
	}
	imp, err := r.build()
	if err != nil {
		return nil, err
	}
	imp.Extra, imp.ExtraFields = r.extra.JSON(), r.extra.count()
	return imp, nil
}

// condition reads an evaluation result, a condition of the run: checked
// against the results before it, then its name, dataset and judge kept.
func (r *reader) condition(where string, e EvaluationResult) error {
	name, cond, ok := strings.Cut(e.EvaluationName, "/")
	switch {
	case !ok || name == "" || cond == "":
		return fmt.Errorf("%s.evaluation_name %q: want CONFIG/CONDITION", where, e.EvaluationName)
	case r.name != "" && name != r.name:
		return fmt.Errorf("%s.evaluation_name %q: another run's (%q before)", where, e.EvaluationName, r.name)
	case !sha256Hex.MatchString(e.SourceData.DatasetSHA256):
		return fmt.Errorf("%s.source_data.dataset_sha256 %q: want 64 hex digits", where, e.SourceData.DatasetSHA256)
	case r.sha != "" && e.SourceData.DatasetSHA256 != r.sha:
		return fmt.Errorf("%s.source_data.dataset_sha256: another dataset than the first result's", where)
	case r.conditions[cond]:
		return fmt.Errorf("%s: condition %q twice", where, cond)
	}
	r.name, r.sha = name, e.SourceData.DatasetSHA256
	r.conditions[cond] = true
	r.order = append(r.order, cond)
	r.samplesNumber = max(r.samplesNumber, e.SourceData.SamplesNumber)
	if t, ok := e.GenerationConfig["judge_temperature"].(float64); ok {
		r.judgeTemperature = &t
	}
	if m, ok := e.GenerationConfig["judge_model"].(string); ok {
		r.judgeModel = m
	}
	if ev, ok := e.ScoreDetails.Details["evaluators"].(map[string]any); ok {
		for metric, e := range ev {
			if s, ok := e.(string); ok {
				r.evaluatorOf[metric] = s
			}
		}
	}
	return nil
}

func readAggregate(name string, data []byte) (*Aggregate, error) {
	var agg Aggregate
	if err := json.Unmarshal(data, &agg); err != nil {
		return nil, fmt.Errorf("%s: %s", name, jsonError(data, err))
	}
	switch {
	case agg.SchemaVersion != AggregateVersion:
		return nil, fmt.Errorf("%s: schema_version %q: want %q (EEE aggregate)", name, agg.SchemaVersion, AggregateVersion)
	case len(agg.EvaluationResults) == 0:
		return nil, fmt.Errorf("%s: evaluation_results is empty: nothing to import", name)
	}
	return &agg, nil
}

// jsonError says where in data a JSON error is.
func jsonError(data []byte, err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	var off int64
	switch {
	case errors.As(err, &syn):
		off = syn.Offset
	case errors.As(err, &typ):
		off = typ.Offset
		return fmt.Sprintf("line %d: %s is %s, want %s", lineAt(data, off), typ.Field, typ.Value, typ.Type)
	default:
		return err.Error()
	}
	return fmt.Sprintf("line %d: %v", lineAt(data, off), err)
}

func lineAt(data []byte, off int64) int {
	return bytes.Count(data[:min(int(off), len(data))], []byte("\n")) + 1
}

type key struct {
	idx  int
	cond string
}

type reader struct {
	files            Files
	agg              *Aggregate
	name, sha        string
	order            []string
	conditions       map[string]bool
	samplesNumber    int
	judgeTemperature *float64
	judgeModel       string
	evaluatorOf      map[string]string // metric → evaluator, from an assay export

	seen    map[key]int // line of each sample and condition
	samples map[int]*store.Sample
	results int // one per repetition of each instance
	metrics []string
	reps    int

	extra     extra // what the files hold that assay does not read
	keepExtra bool  // instance keeps its line's unread fields, while the lines are checked
}

// instance decodes a line of the instances.
func (r *reader) instance(line int, raw []byte) (*Instance, error) {
	var in Instance
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, fmt.Errorf("%s:%d: %s", r.files.InstancesName, line, strings.TrimPrefix(jsonError(raw, err), "line 1: "))
	}
	if r.keepExtra {
		in.extra = lineFields(raw, &in)
	}
	return &in, nil
}

func (r *reader) readInstances() error {
	name := r.files.InstancesName
	perCond := map[string]int{}
	err := r.eachInstance(func(line int, in *Instance) error {
		_, cond, _ := strings.Cut(in.EvaluationName, "/")
		k := key{int(in.SampleIdx), cond}
		if err := r.checkInstance(line, in, k); err != nil {
			return err
		}
		r.seen[k] = line
		r.extra.keepLine(line, in.extra)
		if s := r.samples[k.idx]; s != nil && (s.Input != in.Input.Raw || s.Reference != in.Input.Reference) {
			return fmt.Errorf("%s:%d: sample_idx %d has another question or reference than under another condition", name, line, k.idx)
		}
		if err := r.readRuns(line, in); err != nil {
			return err
		}
		if r.samples[k.idx] == nil {
			id := strconv.Itoa(k.idx + 1)
			if s, ok := in.Evaluation.Details["sample_id"].(string); ok && s != "" {
				id = s
			}
			r.samples[k.idx] = &store.Sample{Ordinal: k.idx + 1, SampleID: id, Input: in.Input.Raw, Reference: in.Input.Reference}
		}
		perCond[cond]++
		r.results += len(in.RunDetails)
		return nil
	})
	if err != nil {
		return err
	}
	return r.checkWhole(perCond)
}

// checkInstance checks an instance line against the aggregate file and
// the lines before it.
func (r *reader) checkInstance(line int, in *Instance, k key) error {
	name := r.files.InstancesName
	switch {
	case in.SchemaVersion != InstanceVersion:
		return fmt.Errorf("%s:%d: schema_version %q: want %q", name, line, in.SchemaVersion, InstanceVersion)
	case r.agg.EvaluationID != "" && in.EvaluationID != r.agg.EvaluationID:
		return fmt.Errorf("%s:%d: evaluation_id %q is not %s's (%q): the files are of different runs", name, line,
			in.EvaluationID, r.files.ResultsName, r.agg.EvaluationID)
	case !r.conditions[k.cond] || !strings.HasPrefix(in.EvaluationName, r.name+"/"):
		return fmt.Errorf("%s:%d: evaluation_name %q is not one of %s's", name, line, in.EvaluationName, r.files.ResultsName)
	case strings.TrimSpace(in.Input.Raw) == "":
		return fmt.Errorf("%s:%d: input.raw is empty", name, line)
	case len(in.RunDetails) == 0:
		return fmt.Errorf("%s:%d: run_details is empty", name, line)
	case r.seen[k] > 0:
		return fmt.Errorf("%s:%d: sample_idx %d under %q again (first at line %d)", name, line, k.idx, k.cond, r.seen[k])
	}
	return nil
}

// readRuns checks an instance's repetitions and notes their metrics.
func (r *reader) readRuns(line int, in *Instance) error {
	reps := map[int]bool{}
	for j, run := range in.RunDetails {
		if run.RepetitionIndex < 0 || reps[run.RepetitionIndex] {
			return fmt.Errorf("%s:%d: run_details[%d].repetition_index %d: negative or repeated", r.files.InstancesName, line, j, run.RepetitionIndex)
		}
		reps[run.RepetitionIndex] = true
		r.reps = max(r.reps, run.RepetitionIndex+1)
		for m, v := range run.Scores {
			if !slices.Contains(r.metrics, m) {
				r.metrics = append(r.metrics, m)
			}
			if v == nil {
				continue
			}
			if why := outOfScale(r.evaluator(m), *v); why != "" {
				return fmt.Errorf("%s:%d: run_details[%d].scores.%s is %g: %s", r.files.InstancesName, line, j, m, *v, why)
			}
		}
	}
	return nil
}

// checkWhole checks the instances file holds every condition's every sample.
func (r *reader) checkWhole(perCond map[string]int) error {
	name := r.files.InstancesName
	for _, c := range r.order {
		if perCond[c] == 0 {
			return fmt.Errorf("%s: no line for condition %q, which %s names: a partial file?", name, c, r.files.ResultsName)
		}
	}
	if n := len(r.samples); n < r.samplesNumber {
		return fmt.Errorf("%s: %d samples, but %s says %d: a partial file?", name, n, r.files.ResultsName, r.samplesNumber)
	}
	for c, n := range perCond {
		if n != len(r.samples) {
			return fmt.Errorf("%s: condition %q has %d of the %d samples: a partial file?", name, c, n, len(r.samples))
		}
	}
	return nil
}

// evaluator is the evaluator that gives metric: as an assay export says,
// else the built-in one that has it, else one of its own name.
func (r *reader) evaluator(metric string) string {
	if e := r.evaluatorOf[metric]; e != "" {
		return e
	}
	for _, e := range config.Evaluators {
		if slices.Contains(e.Metrics(), metric) {
			return string(e)
		}
	}
	return metric
}

func (r *reader) build() (*store.RunImport, error) {
	imp := &store.RunImport{}
	if ts, err := strconv.ParseInt(r.agg.RetrievedTimestamp, 10, 64); err == nil && ts > 0 {
		imp.Finished = time.Unix(ts, 0)
	}
	var evaluators []config.Evaluator
	for _, m := range r.metrics {
		if e := config.Evaluator(r.evaluator(m)); !slices.Contains(evaluators, e) {
			evaluators = append(evaluators, e)
		}
	}
	for _, idx := range sortedKeys(r.samples) {
		imp.Samples = append(imp.Samples, *r.samples[idx])
	}
	kind := assay.KindQA
	for _, e := range evaluators {
		switch e {
		case config.EvalExactMatch:
			kind = assay.KindMCQ
		case config.EvalNumericMatch:
			kind = assay.KindMath
		case config.EvalCodeExecution:
			kind = assay.KindCode
		}
	}
	imp.Dataset = store.Dataset{Name: r.name, Kind: kind, SHA256: r.sha, Format: "eee", Filename: r.files.InstancesName,
		Size: r.files.Instances.Size, QuestionKey: "question", AnswerKey: "answer"}
	cfg := config.Defaults()
	cfg.Name = r.name
	cfg.Agent = config.Agent{Model: r.agg.ModelInfo.ID}
	cfg.Judge.Model = r.judgeModel
	if r.judgeTemperature != nil {
		cfg.Judge.Temperature = *r.judgeTemperature
	}
	cfg.Evaluators = evaluators
	cfg.Execution.NumRepetitions = r.reps
	imp.Run = store.Run{Name: r.name, Config: cfg, Repetitions: r.reps}
	for _, c := range r.order {
		imp.Run.Conditions = append(imp.Run.Conditions, assay.Condition{Name: c})
	}
	imp.Results, imp.Run.TotalTasks = r.results, r.results
	imp.EachResult = func(fn func(res *store.Result, ordinal int) error) error {
		return r.eachInstance(func(_ int, in *Instance) error { return r.eachResult(in, fn) })
	}
	return imp, nil
}

// toolCalls are a repetition's MCP tool calls in k-eval 1.1's
// answer_attribution, as the results' tool calls.
//
// What the agent wrote before a call (a non-terminal agent_reasoning entry)
// is kept as the next call's thought.
func toolCalls(trace []Attribution, rep int) []store.ToolCall {
	var out []store.ToolCall
	thought := ""
	for _, a := range trace {
		if a.RepetitionIndex != rep {
			continue
		}
		if a.Source == "agent_reasoning" && !a.IsTerminal {
			thought = strings.TrimSpace(strings.TrimSpace(thought) + "\n" + a.ExtractedValue)
			continue
		}
		if a.Source != "mcp_tool" {
			continue
		}
		server, tool := "", a.ToolName
		if rest, ok := strings.CutPrefix(tool, "mcp__"); ok { // Claude Code's mcp__SERVER__TOOL
			if s, t, ok := strings.Cut(rest, "__"); ok {
				server, tool = s, t
			}
		}
		out = append(out, store.ToolCall{Turn: a.TurnIdx, Server: server, Tool: tool, Arguments: a.arguments(), Result: a.ExtractedValue,
			IsError: a.failed(), DurationMS: a.millis(), Thought: thought})
		thought = ""
	}
	return out
}

// eachResult turns an instance's runs into results, given to fn with the
// ordinal of their sample.
func (r *reader) eachResult(in *Instance, fn func(res *store.Result, ordinal int) error) error {
	claims := stringList(in.Evaluation.Details["unverified_claims"])
	for j, run := range in.RunDetails {
		res := r.answerOf(in, j, run)
		res.Judgements = r.judgementsOf(in, j, run, res.Error)
		if j == 0 && len(res.Judgements) > 0 {
			res.Judgements[0].UnverifiedClaims = claims
		}
		if err := fn(res, int(in.SampleIdx)+1); err != nil {
			return err
		}
	}
	return nil
}

// answerOf is repetition j of an instance as a result, without its scores.
func (r *reader) answerOf(in *Instance, j int, run Run) *store.Result {
	_, cond, _ := strings.Cut(in.EvaluationName, "/")
	res := &store.Result{Condition: cond, Repetition: run.RepetitionIndex + 1, Response: run.AgentResponse,
		Error: run.Error, ErrorKind: store.ErrorKind(run.ErrorKind), Model: in.ModelID, Attempts: 1}
	if res.Response == "" && j < len(in.Output.RawRuns) {
		res.Response = in.Output.RawRuns[j]
	}
	if res.Response == "" && j == 0 {
		res.Response = in.Output.Raw
	}
	res.ToolCalls = toolCalls(in.AnswerAttribution, run.RepetitionIndex)
	if run.CostUSD != nil {
		res.CostUSD, res.CostSource = *run.CostUSD, store.CostFromAgent
	}
	if run.DurationMS != nil {
		res.LatencyMS = *run.DurationMS
	}
	if run.NumTurns != nil && *run.NumTurns > 0 {
		res.Attempts, res.Turns = *run.NumTurns, *run.NumTurns
	}
	res.TokensIn = share(in.TokenUsage.InputTokens, j, len(in.RunDetails))
	res.TokensOut = share(in.TokenUsage.OutputTokens, j, len(in.RunDetails))
	return res
}

// judgementsOf are repetition j's scores, a judgement per evaluator with
// each score's reasoning; or its judge's error, where it has no score.
func (r *reader) judgementsOf(in *Instance, j int, run Run, agentError string) []store.Judgement {
	judgements := map[string]*store.Judgement{}
	var order []string
	for _, m := range r.metrics {
		v, ok := run.Scores[m]
		if !ok || v == nil {
			continue
		}
		e := r.evaluator(m)
		jd := judgements[e]
		if jd == nil {
			jd = &store.Judgement{Evaluator: e}
			judgements[e] = jd
			order = append(order, e)
		}
		reasons := stringList(in.Evaluation.Details[m+"_reasonings"])
		s := store.Score{Metric: m, Value: *v}
		if j < len(reasons) {
			s.Reasoning = reasons[j]
		}
		jd.Scores = append(jd.Scores, s)
	}
	if len(order) == 0 && run.JudgeError != "" && agentError == "" {
		e, msg, ok := strings.Cut(run.JudgeError, ": ")
		if !ok {
			e, msg = string(config.EvalRubric), run.JudgeError
		}
		judgements[e] = &store.Judgement{Evaluator: e, Error: msg}
		order = append(order, e)
	}
	var out []store.Judgement
	for _, e := range order {
		out = append(out, *judgements[e])
	}
	return out
}

// share is repetition j's part of n of a total the files give only for all
// of them: an even share, the remainder on the first.
func share(total *int, j, n int) int {
	if total == nil {
		return 0
	}
	s := *total / n
	if j == 0 {
		s += *total % n
	}
	return s
}

func stringList(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, x := range list {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

func sortedKeys(m map[int]*store.Sample) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
