package eee

import (
	"cmp"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"assay"
	"assay/config"
	"assay/store"
)

// official reports whether an aggregate file is in the official schema's
// shape (a metric per evaluation result, the dataset by name) rather than
// k-eval's (the dataset by its SHA-256, every metric in one result).
func official(data []byte) bool {
	var probe struct {
		EvaluationResults []struct {
			EvaluationResultID string `json:"evaluation_result_id"`
			SourceData         struct {
				DatasetName string `json:"dataset_name"`
			} `json:"source_data"`
		} `json:"evaluation_results"`
	}
	if json.Unmarshal(data, &probe) != nil || len(probe.EvaluationResults) == 0 {
		return false
	}
	e := probe.EvaluationResults[0]
	return e.EvaluationResultID != "" || e.SourceData.DatasetName != ""
}

// byName prefixes the key of a result without an evaluation_result_id.
const byName = "\x00name:"

// officialMetric is a metric of the files: its evaluator and name, and
// its results' ids.
type officialMetric struct {
	evaluator, name string
	min, max        *float64 // the scores' bounds the file gives
}

// readOfficial turns files of the official schema into a run to import:
// assay's own (whose instance lines carry its judgements, conditions and
// repetitions as metadata) give back the same run; another tool's give a
// run whose every line is one metric's score of one answer.
func readOfficial(f Files) (*store.RunImport, error) {
	var agg OfficialAggregate
	if err := json.Unmarshal(f.Results, &agg); err != nil {
		return nil, fmt.Errorf("%s: %s", f.ResultsName, jsonError(f.Results, err))
	}
	if !slices.Contains(OfficialVersions, agg.SchemaVersion) {
		return nil, fmt.Errorf("%s: schema_version %q: want one of %s (EEE)", f.ResultsName, agg.SchemaVersion, strings.Join(OfficialVersions, ", "))
	}
	if err := checkOfficial(f.Results, true, agg.SchemaVersion); err != nil {
		return nil, fmt.Errorf("%s: %v", f.ResultsName, err)
	}
	r := &officialReader{f: f, agg: &agg, metrics: map[string]officialMetric{}, results: map[resultKey]*store.Result{},
		samples: map[string]*store.Sample{}, seen: map[string]int{}, reps: 1}
	r.kept.keepResults(f.Results, &agg)
	if err := r.readResults(); err != nil {
		return nil, err
	}
	if err := eachLine(f.Instances, f.InstancesName, r.line); err != nil {
		return nil, err
	}
	if r.lines == 0 {
		return nil, fmt.Errorf("%s: no instance line: nothing to import", f.InstancesName)
	}
	return r.build(), nil
}

// officialReader reads the official schema's files into a run.
type officialReader struct {
	f    Files
	agg  *OfficialAggregate
	kept extra // what the files hold that assay does not read

	// From the aggregate.
	name       string
	conditions []string
	metrics    map[string]officialMetric // by evaluation_result_id (or byName)
	order      []officialMetric
	sha        string
	judges     []config.Judge
	judgeTemp  float64

	// From the lines, grouped into results: a result is one answer — a
	// repetition of a sample under a condition.
	results     map[resultKey]*store.Result
	keys        []resultKey
	samples     map[string]*store.Sample
	sampleOrder []string
	seen        map[string]int // condition, sample and result id: its lines so far, for files without repetitions
	lines, reps int
}

// resultKey is one answer's place: a repetition of a sample under a condition.
type resultKey struct {
	cond, sample string
	rep          int
}

// readResults reads the aggregate's evaluation results: the run's name, its
// conditions and metrics, the dataset's SHA-256 and the judges.
func (r *officialReader) readResults() error {
	for i, e := range r.agg.EvaluationResults {
		run, cond, ok := strings.Cut(e.EvaluationName, "/")
		if !ok {
			run, cond = e.EvaluationName, e.EvaluationName
		}
		r.name = cmp.Or(r.name, run)
		if !slices.Contains(r.conditions, cond) {
			r.conditions = append(r.conditions, cond)
		}
		if err := r.addMetric(i, e); err != nil {
			return err
		}
		if s := e.SourceData.AdditionalDetails["dataset_sha256"]; r.sha == "" && sha256Hex.MatchString(s) {
			r.sha = s
		}
		if ls := e.MetricConfig.LLMScoring; ls != nil && r.judges == nil {
			r.judges = judgesOf(ls)
		}
		if t, err := strconv.ParseFloat(e.GenerationConfig.details()["judge_temperature"], 64); err == nil {
			r.judgeTemp = t
		}
	}
	r.conditions = withListed(r.conditions, r.agg.SourceMetadata.AdditionalDetails[metaConditions])
	if len(r.conditions) == 0 {
		return fmt.Errorf("%s: evaluation_results is empty: nothing to import", r.f.ResultsName)
	}
	return nil
}

// addMetric takes in the metric of evaluation result i.
func (r *officialReader) addMetric(i int, e OfficialResult) error {
	mc := e.MetricConfig
	m := officialMetric{evaluator: mc.AdditionalDetails["assay_evaluator"], name: mc.MetricName, min: mc.MinScore, max: mc.MaxScore}
	if ev, metric, ok := strings.Cut(mc.MetricID, "."); ok && m.evaluator == "" {
		m.evaluator, m.name = ev, orElse(m.name, metric)
	}
	if m.name == "" {
		m.name = orElse(mc.MetricID, e.EvaluationResultID)
	}
	if m.evaluator == "" {
		m.evaluator = builtinEvaluator(m.name)
	}
	id := e.EvaluationResultID
	if id == "" {
		// Lines name such a result by its evaluation_name alone.
		id = byName + e.EvaluationName
		if _, twice := r.metrics[id]; twice {
			return fmt.Errorf("%s: evaluation_results[%d]: a second result named %q without an evaluation_result_id: the instance lines cannot tell them apart",
				r.f.ResultsName, i, e.EvaluationName)
		}
	}
	r.metrics[id] = m
	if !slices.Contains(r.order, m) {
		r.order = append(r.order, m)
	}
	return nil
}

// judgesOf are the judges an evaluation result names.
func judgesOf(ls *OfficialLLMScoring) []config.Judge {
	var out []config.Judge
	for _, j := range ls.Judges {
		jc := config.Judge{Model: j.ModelInfo.ID, Name: orElse(j.AdditionalDetails["name"], j.ModelInfo.ID)}
		if j.Temperature != nil {
			jc.Temperature = *j.Temperature
		}
		out = append(out, jc)
	}
	return out
}

// line takes in one instance line: its sample, its answer, and its
// metric's judgements of the answer.
func (r *officialReader) line(line int, raw []byte) error {
	var in OfficialInstance
	if err := json.Unmarshal(raw, &in); err != nil {
		return fmt.Errorf("%s:%d: %s", r.f.InstancesName, line, strings.TrimPrefix(jsonError(raw, err), "line 1: "))
	}
	if err := checkOfficial(raw, false, r.agg.SchemaVersion); err != nil {
		return fmt.Errorf("%s:%d: %v", r.f.InstancesName, line, err)
	}
	r.kept.keepLine(line, lineFields(raw, &in))
	r.lines++
	cond, resultID, err := r.placeOf(line, &in)
	if err != nil {
		return err
	}
	if err := r.takeSample(line, &in); err != nil {
		return err
	}
	res := r.resultOf(cond, resultID, &in)
	if resultID == "" {
		// An answer that failed: the agent's error.
		if in.Error != nil {
			res.Error, res.ErrorKind = *in.Error, store.ErrorKind(in.Metadata[metaErrorKind])
		}
		return nil
	}
	return r.judged(line, res, r.metrics[resultID], &in)
}

// placeOf is a line's condition and the id of its metric's result: by its
// result's id; by its evaluation_name in another tool's files; none on
// assay's line of a failed answer.
func (r *officialReader) placeOf(line int, in *OfficialInstance) (cond, resultID string, err error) {
	_, cond, ok := strings.Cut(in.EvaluationName, "/")
	if !ok {
		cond = in.EvaluationName
	}
	cond = orElse(in.Metadata[metaCondition], cond)
	switch {
	case !slices.Contains(r.conditions, cond):
		return "", "", fmt.Errorf("%s:%d: evaluation_name %q is not one of %s's", r.f.InstancesName, line, in.EvaluationName, r.f.ResultsName)
	case in.SampleID == "":
		return "", "", fmt.Errorf("%s:%d: sample_id is empty", r.f.InstancesName, line)
	case in.EvaluationResultID != "" && r.metrics[in.EvaluationResultID] == (officialMetric{}):
		return "", "", fmt.Errorf("%s:%d: evaluation_result_id %q is not one of %s's", r.f.InstancesName, line, in.EvaluationResultID, r.f.ResultsName)
	}
	resultID = in.EvaluationResultID
	if resultID == "" && in.Metadata[metaCondition] == "" {
		resultID = byName + in.EvaluationName
		if r.metrics[resultID] == (officialMetric{}) {
			return "", "", fmt.Errorf("%s:%d: no evaluation_result_id, and %s has no result of evaluation_name %q without one",
				r.f.InstancesName, line, r.f.ResultsName, in.EvaluationName)
		}
	}
	return cond, resultID, nil
}

// takeSample keeps a line's sample the first time it is seen, and checks
// its question the next times.
func (r *officialReader) takeSample(line int, in *OfficialInstance) error {
	s := r.samples[in.SampleID]
	if s != nil {
		if s.Input != in.Input.Raw {
			return fmt.Errorf("%s:%d: sample_id %q has another question than on an earlier line", r.f.InstancesName, line, in.SampleID)
		}
		return nil
	}
	ref := ""
	if len(in.Input.Reference) > 0 {
		ref = in.Input.Reference[0]
	}
	r.samples[in.SampleID] = &store.Sample{Ordinal: len(r.sampleOrder) + 1, SampleID: in.SampleID, Input: in.Input.Raw, Reference: ref, Choices: in.Input.Choices}
	r.sampleOrder = append(r.sampleOrder, in.SampleID)
	return nil
}

// resultOf is the answer a line is of, made from its first line.
func (r *officialReader) resultOf(cond, resultID string, in *OfficialInstance) *store.Result {
	rep, err := strconv.Atoi(in.Metadata[metaRepetition])
	if err != nil || rep < 1 {
		k := cond + "\x00" + in.SampleID + "\x00" + resultID
		r.seen[k]++
		rep = r.seen[k]
	}
	r.reps = max(r.reps, rep)
	k := resultKey{cond, in.SampleID, rep}
	if res := r.results[k]; res != nil {
		return res
	}
	res := answerOf(cond, rep, in)
	r.results[k] = res
	r.keys = append(r.keys, k)
	return res
}

// answerOf is the answer a line gives: its response, tokens, latency, cost,
// turns and tool calls.
func answerOf(cond string, rep int, in *OfficialInstance) *store.Result {
	res := &store.Result{Condition: cond, Repetition: rep, Model: orElse(in.Metadata[metaModel], in.ModelID), Attempts: 1}
	if in.Output != nil && len(in.Output.Raw) > 0 {
		res.Response = in.Output.Raw[0]
	} else if n := len(in.Messages); n > 0 && in.Messages[n-1].Role == "assistant" && in.Messages[n-1].Content != nil {
		res.Response = *in.Messages[n-1].Content
	}
	if t := in.TokenUsage; t != nil {
		res.TokensIn, res.TokensOut = t.InputTokens, t.OutputTokens
		if t.InputTokensCacheRead != nil {
			res.CacheReadTokens = *t.InputTokensCacheRead
		}
		if t.InputTokensCacheWrite != nil {
			res.CacheWriteTokens = *t.InputTokensCacheWrite
		}
	}
	if p := in.Performance; p != nil && p.LatencyMS != nil {
		res.LatencyMS = int64(*p.LatencyMS)
	}
	if c, err := strconv.ParseFloat(in.Metadata[metaCost], 64); err == nil {
		res.CostUSD, res.CostSource = c, store.CostFromAgent
	}
	if n := in.Evaluation.NumTurns; n != nil && *n > 0 {
		res.Attempts, res.Turns = *n, *n
	}
	if calls := in.Metadata[metaTools]; calls != "" {
		json.Unmarshal([]byte(calls), &res.ToolCalls)
	} else {
		res.ToolCalls = toolCallsOf(in.Messages)
	}
	return res
}

// judged adds a line's judgements of metric m to its answer: assay's, every
// judge call's, from its metadata; another tool's, the line's score.
func (r *officialReader) judged(line int, res *store.Result, m officialMetric, in *OfficialInstance) error {
	var judged []lineJudgement
	if js := in.Metadata[metaJudgements]; js != "" {
		if err := json.Unmarshal([]byte(js), &judged); err != nil {
			return fmt.Errorf("%s:%d: metadata.%s: %v", r.f.InstancesName, line, metaJudgements, err)
		}
	} else {
		lj := lineJudgement{Evaluator: m.evaluator}
		if in.Error != nil {
			lj.Error = *in.Error
		} else {
			score := in.Evaluation.Score
			lj.Score = &score
		}
		judged = []lineJudgement{lj}
	}
	for _, lj := range judged {
		if lj.Score != nil {
			if why := m.outOfScale(orElse(lj.Evaluator, m.evaluator), *lj.Score); why != "" {
				return fmt.Errorf("%s:%d: the score of %s is %g: %s", r.f.InstancesName, line, m.name, *lj.Score, why)
			}
		}
		j := judgementOf(res, lj)
		if lj.Score != nil {
			j.Scores = append(j.Scores, store.Score{Metric: m.name, Value: *lj.Score, Reasoning: lj.Reasoning})
		}
	}
	if claims := in.Metadata[metaClaims]; claims != "" && len(res.Judgements) > 0 && res.Judgements[0].UnverifiedClaims == nil {
		json.Unmarshal([]byte(claims), &res.Judgements[0].UnverifiedClaims)
	}
	return nil
}

// build is the run to import: its dataset, config, conditions and results.
func (r *officialReader) build() *store.RunImport {
	imp := &store.RunImport{}
	if ts, err := strconv.ParseInt(r.agg.RetrievedTimestamp, 10, 64); err == nil && ts > 0 {
		imp.Finished = time.Unix(ts, 0)
	}
	var evaluators []config.Evaluator
	for _, m := range r.order {
		if e := config.Evaluator(m.evaluator); !slices.Contains(evaluators, e) {
			evaluators = append(evaluators, e)
		}
	}
	for _, id := range r.sampleOrder {
		imp.Samples = append(imp.Samples, *r.samples[id])
	}
	kind := assay.Kind(r.agg.SourceMetadata.AdditionalDetails["assay_dataset_kind"])
	if !slices.Contains(assay.Kinds, kind) {
		kind = kindOf(evaluators)
	}
	imp.Dataset = store.Dataset{Name: r.name, Kind: kind, SHA256: r.datasetSHA256(), Format: "eee", Filename: r.f.InstancesName,
		Size: r.f.Instances.Size, QuestionKey: "question", AnswerKey: "answer"}
	cfg := r.config(evaluators)
	imp.Run = store.Run{Name: r.name, Config: cfg, Repetitions: cfg.Execution.NumRepetitions}
	imp.Extra, imp.ExtraFields = r.kept.JSON(), r.kept.count()
	for _, c := range r.conditions {
		imp.Run.Conditions = append(imp.Run.Conditions, assay.Condition{Name: c})
	}
	imp.Results, imp.Run.TotalTasks = len(r.keys), len(r.keys)
	imp.EachResult = func(fn func(res *store.Result, ordinal int) error) error {
		for _, k := range r.keys {
			if err := fn(r.results[k], r.samples[k.sample].Ordinal); err != nil {
				return err
			}
		}
		return nil
	}
	return imp
}

// datasetSHA256 is the SHA-256 the files name; another tool's name no
// dataset bytes, and the questions and answers, in order, stand for them.
func (r *officialReader) datasetSHA256() string {
	if r.sha != "" {
		return r.sha
	}
	h := sha256.New()
	for _, id := range r.sampleOrder {
		s := r.samples[id]
		fmt.Fprintf(h, "%s\x00%s\x00%s\n", s.SampleID, s.Input, s.Reference)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// config is the run's config as far as the files say it.
func (r *officialReader) config(evaluators []config.Evaluator) *config.Config {
	details := r.agg.SourceMetadata.AdditionalDetails
	cfg := config.Defaults()
	cfg.Name = r.name
	cfg.Agent = config.Agent{Model: r.agg.ModelInfo.ID}
	if len(r.judges) > 0 {
		cfg.Judge = r.judges[0]
		if len(r.judges) > 1 {
			cfg.Judges = r.judges
		}
	}
	cfg.Judge.Temperature = r.judgeTemp
	if n, err := strconv.Atoi(details["assay_judge_repetitions"]); err == nil && n > 0 {
		cfg.JudgeRepetitions = n
	}
	reps := r.reps
	if n, err := strconv.Atoi(details["assay_repetitions"]); err == nil && n > 0 {
		reps = max(reps, n)
	}
	cfg.Evaluators = evaluators
	cfg.Execution.NumRepetitions = reps
	return cfg
}

// withListed is conditions with those an assay export lists (listed, JSON)
// in its order: a condition whose every answer failed has no result.
func withListed(conditions []string, listed string) []string {
	var names []string
	if listed == "" || json.Unmarshal([]byte(listed), &names) != nil {
		return conditions
	}
	out := slices.Clone(names)
	for _, c := range conditions {
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// toolCallsOf are the tool calls of a transcript, each with the content
// of the tool message that answers it.
func toolCallsOf(msgs []OfficialMessage) []store.ToolCall {
	var out []store.ToolCall
	for _, m := range msgs {
		for i, tc := range m.ToolCalls {
			call := store.ToolCall{Turn: m.TurnIdx, Tool: tc.Name}
			if i == 0 && m.Content != nil {
				call.Thought = *m.Content // the assistant's words with its calls
			}
			if server, tool, ok := strings.Cut(tc.Name, "/"); ok {
				call.Server, call.Tool = server, tool
			}
			if len(tc.Arguments) > 0 {
				call.Arguments, _ = json.Marshal(tc.Arguments)
			}
			for _, answer := range msgs {
				if answer.Role == "tool" && slices.Contains(answer.ToolCallID, tc.ID) && answer.Content != nil {
					call.Result = *answer.Content
				}
			}
			out = append(out, call)
		}
	}
	return out
}

// judgementOf is res's judgement of lj's evaluator, judge and judge
// repetition, made when missing.
func judgementOf(res *store.Result, lj lineJudgement) *store.Judgement {
	for i := range res.Judgements {
		j := &res.Judgements[i]
		if j.Evaluator == lj.Evaluator && j.Judge == lj.Judge && j.JudgeIndex == lj.JudgeIndex && j.JudgeRepetition == lj.JudgeRepetition {
			return j
		}
	}
	res.Judgements = append(res.Judgements, store.Judgement{Evaluator: lj.Evaluator, Judge: lj.Judge, JudgeIndex: lj.JudgeIndex,
		JudgeRepetition: lj.JudgeRepetition, Seed: lj.Seed, Error: lj.Error, ErrorKind: store.ErrorKind(lj.ErrorKind), Raw: lj.Raw,
		Detail: lj.Detail, CostUSD: lj.CostUSD, TokensIn: lj.TokensIn, TokensOut: lj.TokensOut, LatencyMS: lj.LatencyMS, Attempts: 1})
	return &res.Judgements[len(res.Judgements)-1]
}

// builtinEvaluator is the built-in evaluator that gives metric, else the
// metric's own name.
func builtinEvaluator(metric string) string {
	for _, e := range config.Evaluators {
		if slices.Contains(e.Metrics(), metric) {
			return string(e)
		}
	}
	return metric
}

// kindOf is the dataset kind evaluators score.
func kindOf(evaluators []config.Evaluator) assay.Kind {
	for _, e := range evaluators {
		switch e {
		case config.EvalExactMatch:
			return assay.KindMCQ
		case config.EvalNumericMatch:
			return assay.KindMath
		case config.EvalCodeExecution:
			return assay.KindCode
		}
	}
	return assay.KindQA
}

// details is a generation config's additional details; nil for none.
func (g *OfficialGenerationConfig) details() map[string]string {
	if g == nil {
		return nil
	}
	return g.AdditionalDetails
}

func orElse(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
