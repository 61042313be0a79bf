package eee

import (
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
	var kept extra // what the files hold that assay does not read
	kept.keepResults(f.Results, &agg)
	name := ""
	var conditions []string
	metrics := map[string]officialMetric{} // by evaluation_result_id
	var order []officialMetric
	sha := ""
	var judges []config.Judge
	judgeTemp := 0.0
	for i, e := range agg.EvaluationResults {
		where := fmt.Sprintf("%s: evaluation_results[%d]", f.ResultsName, i)
		run, cond, ok := strings.Cut(e.EvaluationName, "/")
		if !ok {
			run, cond = e.EvaluationName, e.EvaluationName
		}
		if name == "" {
			name = run
		}
		if !slices.Contains(conditions, cond) {
			conditions = append(conditions, cond)
		}
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
			if _, twice := metrics[id]; twice {
				return nil, fmt.Errorf("%s: a second result named %q without an evaluation_result_id: the instance lines cannot tell them apart", where, e.EvaluationName)
			}
		}
		metrics[id] = m
		if !slices.Contains(order, m) {
			order = append(order, m)
		}
		if s := e.SourceData.AdditionalDetails["dataset_sha256"]; sha == "" && sha256Hex.MatchString(s) {
			sha = s
		}
		if ls := mc.LLMScoring; ls != nil && judges == nil {
			for _, j := range ls.Judges {
				jc := config.Judge{Model: j.ModelInfo.ID, Name: orElse(j.AdditionalDetails["name"], j.ModelInfo.ID)}
				if j.Temperature != nil {
					jc.Temperature = *j.Temperature
				}
				judges = append(judges, jc)
			}
		}
		if t, err := strconv.ParseFloat(e.GenerationConfig.details()["judge_temperature"], 64); err == nil {
			judgeTemp = t
		}
	}
	conditions = withListed(conditions, agg.SourceMetadata.AdditionalDetails[metaConditions])
	if len(conditions) == 0 {
		return nil, fmt.Errorf("%s: evaluation_results is empty: nothing to import", f.ResultsName)
	}

	// The lines, grouped into results: a result is one answer — a
	// repetition of a sample under a condition.
	type rkey struct {
		cond, sample string
		rep          int
	}
	results := map[rkey]*store.Result{}
	var keys []rkey
	samples := map[string]*store.Sample{}
	var sampleOrder []string
	seen := map[string]int{} // condition, sample and result id: its lines so far, for files without repetitions
	lines := 0
	reps := 1
	err := eachLine(f.Instances, f.InstancesName, func(line int, raw []byte) error {
		var in OfficialInstance
		if err := json.Unmarshal(raw, &in); err != nil {
			return fmt.Errorf("%s:%d: %s", f.InstancesName, line, strings.TrimPrefix(jsonError(raw, err), "line 1: "))
		}
		if err := checkOfficial(raw, false, agg.SchemaVersion); err != nil {
			return fmt.Errorf("%s:%d: %v", f.InstancesName, line, err)
		}
		kept.keepLine(line, lineFields(raw, &in))
		lines++
		_, cond, ok := strings.Cut(in.EvaluationName, "/")
		if !ok {
			cond = in.EvaluationName
		}
		cond = orElse(in.Metadata[metaCondition], cond)
		switch {
		case !slices.Contains(conditions, cond):
			return fmt.Errorf("%s:%d: evaluation_name %q is not one of %s's", f.InstancesName, line, in.EvaluationName, f.ResultsName)
		case in.SampleID == "":
			return fmt.Errorf("%s:%d: sample_id is empty", f.InstancesName, line)
		case in.EvaluationResultID != "" && metrics[in.EvaluationResultID] == (officialMetric{}):
			return fmt.Errorf("%s:%d: evaluation_result_id %q is not one of %s's", f.InstancesName, line, in.EvaluationResultID, f.ResultsName)
		}
		// The line's metric: by its result's id; by its evaluation_name in
		// another tool's files; none on assay's line of a failed answer.
		resultID := in.EvaluationResultID
		if resultID == "" && in.Metadata[metaCondition] == "" {
			resultID = byName + in.EvaluationName
			if metrics[resultID] == (officialMetric{}) {
				return fmt.Errorf("%s:%d: no evaluation_result_id, and %s has no result of evaluation_name %q without one", f.InstancesName, line, f.ResultsName, in.EvaluationName)
			}
		}
		s := samples[in.SampleID]
		ref := ""
		if len(in.Input.Reference) > 0 {
			ref = in.Input.Reference[0]
		}
		if s == nil {
			s = &store.Sample{Ordinal: len(sampleOrder) + 1, SampleID: in.SampleID, Input: in.Input.Raw, Reference: ref, Choices: in.Input.Choices}
			samples[in.SampleID] = s
			sampleOrder = append(sampleOrder, in.SampleID)
		} else if s.Input != in.Input.Raw {
			return fmt.Errorf("%s:%d: sample_id %q has another question than on an earlier line", f.InstancesName, line, in.SampleID)
		}
		rep, err := strconv.Atoi(in.Metadata[metaRepetition])
		if err != nil || rep < 1 {
			k := cond + "\x00" + in.SampleID + "\x00" + resultID
			seen[k]++
			rep = seen[k]
		}
		reps = max(reps, rep)
		k := rkey{cond, in.SampleID, rep}
		res := results[k]
		if res == nil {
			res = &store.Result{Condition: cond, Repetition: rep, Model: orElse(in.Metadata[metaModel], in.ModelID), Attempts: 1}
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
			results[k] = res
			keys = append(keys, k)
		}
		if resultID == "" {
			// An answer that failed: the agent's error.
			if in.Error != nil {
				res.Error, res.ErrorKind = *in.Error, store.ErrorKind(in.Metadata[metaErrorKind])
			}
			return nil
		}
		m := metrics[resultID]
		var judged []lineJudgement
		if js := in.Metadata[metaJudgements]; js != "" {
			if err := json.Unmarshal([]byte(js), &judged); err != nil {
				return fmt.Errorf("%s:%d: metadata.%s: %v", f.InstancesName, line, metaJudgements, err)
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
					return fmt.Errorf("%s:%d: the score of %s is %g: %s", f.InstancesName, line, m.name, *lj.Score, why)
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
	})
	if err != nil {
		return nil, err
	}
	if lines == 0 {
		return nil, fmt.Errorf("%s: no instance line: nothing to import", f.InstancesName)
	}

	imp := &store.RunImport{}
	if ts, err := strconv.ParseInt(agg.RetrievedTimestamp, 10, 64); err == nil && ts > 0 {
		imp.Finished = time.Unix(ts, 0)
	}
	if sha == "" {
		// Another tool's files name no dataset bytes: the questions and
		// answers, in order, stand for them.
		h := sha256.New()
		for _, id := range sampleOrder {
			s := samples[id]
			fmt.Fprintf(h, "%s\x00%s\x00%s\n", s.SampleID, s.Input, s.Reference)
		}
		sha = fmt.Sprintf("%x", h.Sum(nil))
	}
	var evaluators []config.Evaluator
	for _, m := range order {
		if e := config.Evaluator(m.evaluator); !slices.Contains(evaluators, e) {
			evaluators = append(evaluators, e)
		}
	}
	for _, id := range sampleOrder {
		imp.Samples = append(imp.Samples, *samples[id])
	}
	kind := assay.Kind(agg.SourceMetadata.AdditionalDetails["assay_dataset_kind"])
	if !slices.Contains(assay.Kinds, kind) {
		kind = kindOf(evaluators)
	}
	imp.Dataset = store.Dataset{Name: name, Kind: kind, SHA256: sha, Format: "eee", Filename: f.InstancesName,
		Size: f.Instances.Size, QuestionKey: "question", AnswerKey: "answer"}
	cfg := config.Defaults()
	cfg.Name = name
	cfg.Agent = config.Agent{Model: agg.ModelInfo.ID}
	if len(judges) > 0 {
		cfg.Judge = judges[0]
		if len(judges) > 1 {
			cfg.Judges = judges
		}
	}
	cfg.Judge.Temperature = judgeTemp
	if n, err := strconv.Atoi(agg.SourceMetadata.AdditionalDetails["assay_judge_repetitions"]); err == nil && n > 0 {
		cfg.JudgeRepetitions = n
	}
	if n, err := strconv.Atoi(agg.SourceMetadata.AdditionalDetails["assay_repetitions"]); err == nil && n > 0 {
		reps = max(reps, n)
	}
	cfg.Evaluators = evaluators
	cfg.Execution.NumRepetitions = reps
	imp.Run = store.Run{Name: name, Config: cfg, Repetitions: reps}
	imp.Extra, imp.ExtraFields = kept.JSON(), kept.count()
	for _, c := range conditions {
		imp.Run.Conditions = append(imp.Run.Conditions, assay.Condition{Name: c})
	}
	imp.Results, imp.Run.TotalTasks = len(keys), len(keys)
	imp.EachResult = func(fn func(res *store.Result, ordinal int) error) error {
		for _, k := range keys {
			if err := fn(results[k], samples[k.sample].Ordinal); err != nil {
				return err
			}
		}
		return nil
	}
	return imp, nil
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
