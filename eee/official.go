package eee

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"assay/config"
	"assay/report"
	"assay/store"
)

// The official EEE schemas (Every Eval Ever, evaleval/every_eval_ever): the
// versions written, 0.3.0 by default. Their two files have the same shape
// in 0.2.1 and 0.3.0; only the version they name differs.
const (
	OfficialVersion = "0.3.0"
	OlderVersion    = "0.2.1"
)

// OfficialVersions are the versions --eee-version takes.
var OfficialVersions = []string{OfficialVersion, "0.2.3", OlderVersion}

// repositoryStem is where the EEE repository keeps a run's files, without
// their endings: data/BENCHMARK/DEVELOPER/MODEL/UUID, the UUID a version 4
// one made from the run, so that the same run is always written to the
// same place.
func repositoryStem(rep *report.Report) string {
	model := (&exporter{rep: rep}).modelID()
	developer, name, ok := strings.Cut(model, "/")
	if !ok {
		developer, name = developerOf(model), model
	}
	return strings.Join([]string{"data", segment(rep.Run.Name), segment(developer), segment(name), runUUID(rep)}, "/")
}

// runUUID is a version 4 UUID made from the run: the same run always has
// the same, and its first 8 hex digits are those kevalName ends in.
func runUUID(rep *report.Report) string {
	h := runHash(rep)
	h[6] = h[6]&0x0f | 0x40
	h[8] = h[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}

// runHash stands for a run among all runs, in every database.
func runHash(rep *report.Report) [32]byte {
	return sha256.Sum256(fmt.Appendf(nil, "%d\x00%d\x00%s\x00%s", rep.Run.ID, rep.Run.CreatedAt.UnixNano(), rep.Run.Name, rep.Dataset.SHA256))
}

// kevalName is NAME_DATE_ID, as k-eval names its files: ID is 8 hex digits.
func kevalName(rep *report.Report) string {
	h := runHash(rep)
	name := strings.TrimSuffix(Name(rep.Run), fmt.Sprintf("_run%d", rep.Run.ID))
	return fmt.Sprintf("%s_%x", name, h[:4])
}

// developerOf is who made a model named without its developer.
func developerOf(model string) string {
	m := strings.ToLower(model)
	for prefix, developer := range map[string]string{"claude": "anthropic", "gpt-": "openai", "o1": "openai", "o3": "openai",
		"o4": "openai", "gemini": "google", "gemma": "google", "llama": "meta", "mistral": "mistralai", "qwen": "qwen", "deepseek": "deepseek"} {
		if strings.HasPrefix(m, prefix) {
			return developer
		}
	}
	return "unknown"
}

// segment is s as one folder name.
func segment(s string) string {
	s = strings.Trim(regexp.MustCompile(`[^A-Za-z0-9._-]+`).ReplaceAllString(s, "-"), "-.")
	if s == "" {
		return "unknown"
	}
	return s
}

// instanceVersion is what an instance line of a version names itself.
func instanceVersion(v string) string {
	if v == OfficialVersion {
		return v
	}
	return "instance_level_eval_" + v
}

// OfficialAggregate is the aggregate file of the official schema: one
// evaluation result per condition and metric.
type OfficialAggregate struct {
	SchemaVersion       string            `json:"schema_version"`
	EvaluationID        string            `json:"evaluation_id"`
	EvaluationTimestamp string            `json:"evaluation_timestamp,omitempty"`
	RetrievedTimestamp  string            `json:"retrieved_timestamp"`
	SourceMetadata      OfficialSource    `json:"source_metadata"`
	EvalLibrary         OfficialLibrary   `json:"eval_library"`
	ModelInfo           OfficialModel     `json:"model_info"`
	EvaluationResults   []OfficialResult  `json:"evaluation_results"`
	Detailed            *OfficialDetailed `json:"detailed_evaluation_results,omitempty"`
}

// OfficialSource says who made the evaluation.
type OfficialSource struct {
	SourceName            string            `json:"source_name,omitempty"`
	SourceType            string            `json:"source_type"`
	SourceOrganization    string            `json:"source_organization_name"`
	EvaluatorRelationship string            `json:"evaluator_relationship"`
	AdditionalDetails     map[string]string `json:"additional_details,omitempty"`
}

// OfficialLibrary names the tool that made the files.
type OfficialLibrary struct {
	Name              string            `json:"name"`
	Version           string            `json:"version"`
	AdditionalDetails map[string]string `json:"additional_details,omitempty"`
}

// OfficialModel names a model: the one evaluated, or a judge.
type OfficialModel struct {
	Name              string            `json:"name"`
	ID                string            `json:"id"`
	Developer         string            `json:"developer,omitempty"`
	InferencePlatform string            `json:"inference_platform,omitempty"`
	AdditionalDetails map[string]string `json:"additional_details"`
}

// unknownModel is a model whose deployment assay does not know.
func unknownModel(id string) OfficialModel {
	return OfficialModel{Name: id, ID: id, AdditionalDetails: map[string]string{"deployment_type": "unknown", "model_availability": "unknown"}}
}

// OfficialResult is one metric under one condition.
type OfficialResult struct {
	EvaluationResultID  string                    `json:"evaluation_result_id"`
	EvaluationName      string                    `json:"evaluation_name"` // RUN/CONDITION, as k-eval names it
	SourceData          OfficialSourceData        `json:"source_data"`
	EvaluationTimestamp string                    `json:"evaluation_timestamp,omitempty"`
	MetricConfig        OfficialMetricConfig      `json:"metric_config"`
	ScoreDetails        OfficialScoreDetails      `json:"score_details"`
	GenerationConfig    *OfficialGenerationConfig `json:"generation_config,omitempty"`
}

// OfficialSourceData names the dataset: a private one, by its SHA-256.
type OfficialSourceData struct {
	DatasetName       string            `json:"dataset_name"`
	SourceType        string            `json:"source_type"` // other
	URL               []string          `json:"url,omitempty"`
	AdditionalDetails map[string]string `json:"additional_details,omitempty"`
}

// OfficialMetricConfig describes a metric.
type OfficialMetricConfig struct {
	EvaluationDescription string              `json:"evaluation_description,omitempty"`
	MetricID              string              `json:"metric_id,omitempty"` // EVALUATOR.METRIC
	MetricName            string              `json:"metric_name,omitempty"`
	LowerIsBetter         bool                `json:"lower_is_better"`
	ScoreType             string              `json:"score_type,omitempty"` // binary or continuous
	MinScore              *float64            `json:"min_score,omitempty"`
	MaxScore              *float64            `json:"max_score,omitempty"`
	LLMScoring            *OfficialLLMScoring `json:"llm_scoring,omitempty"`
	AdditionalDetails     map[string]string   `json:"additional_details,omitempty"`
}

// OfficialLLMScoring names the judges of a judged metric.
type OfficialLLMScoring struct {
	Judges            []OfficialJudge   `json:"judges"`
	InputPrompt       string            `json:"input_prompt"`
	AggregationMethod string            `json:"aggregation_method,omitempty"`
	AdditionalDetails map[string]string `json:"additional_details,omitempty"`
}

// OfficialJudge is one judge of a panel.
type OfficialJudge struct {
	ModelInfo         OfficialModel     `json:"model_info"`
	Temperature       *float64          `json:"temperature,omitempty"`
	AdditionalDetails map[string]string `json:"additional_details,omitempty"`
}

// OfficialScoreDetails is a metric's figure under a condition.
type OfficialScoreDetails struct {
	Score       float64              `json:"score"`
	Details     map[string]string    `json:"details,omitempty"`
	Uncertainty *OfficialUncertainty `json:"uncertainty,omitempty"`
}

// OfficialUncertainty is the figure's spread.
type OfficialUncertainty struct {
	StandardError      *OfficialStandardError `json:"standard_error,omitempty"`
	ConfidenceInterval *OfficialInterval      `json:"confidence_interval,omitempty"`
	StandardDeviation  *float64               `json:"standard_deviation,omitempty"`
	NumSamples         int                    `json:"num_samples,omitempty"`
}

// OfficialStandardError is a standard error and how it was computed.
type OfficialStandardError struct {
	Value  float64 `json:"value"`
	Method string  `json:"method,omitempty"`
}

// OfficialInterval is a confidence interval.
type OfficialInterval struct {
	Lower           float64 `json:"lower"`
	Upper           float64 `json:"upper"`
	ConfidenceLevel float64 `json:"confidence_level,omitempty"`
	Method          string  `json:"method,omitempty"`
}

// OfficialGenerationConfig is how the answers were made.
type OfficialGenerationConfig struct {
	GenerationArgs    map[string]any    `json:"generation_args,omitempty"`
	AdditionalDetails map[string]string `json:"additional_details,omitempty"`
}

// OfficialDetailed points at the instance file.
type OfficialDetailed struct {
	Format        string `json:"format"`
	FilePath      string `json:"file_path"`
	HashAlgorithm string `json:"hash_algorithm,omitempty"`
	Checksum      string `json:"checksum,omitempty"`
	TotalRows     int    `json:"total_rows,omitempty"`
}

// OfficialInstance is one line of the instance file: one metric's score of
// one answer (one repetition of a sample under a condition), or one answer
// that failed.
type OfficialInstance struct {
	SchemaVersion      string                `json:"schema_version"`
	EvaluationID       string                `json:"evaluation_id"`
	ModelID            string                `json:"model_id"`
	EvaluationName     string                `json:"evaluation_name"`
	EvaluationResultID string                `json:"evaluation_result_id,omitempty"`
	SampleID           string                `json:"sample_id"`
	InteractionType    string                `json:"interaction_type"`
	Input              OfficialInput         `json:"input"`
	Output             *OfficialOutput       `json:"output"`
	Messages           []OfficialMessage     `json:"messages,omitempty"`
	AnswerAttribution  []OfficialAttribution `json:"answer_attribution"`
	Evaluation         OfficialEvaluation    `json:"evaluation"`
	TokenUsage         *OfficialTokens       `json:"token_usage,omitempty"`
	Performance        *OfficialPerformance  `json:"performance,omitempty"`
	Error              *string               `json:"error,omitempty"`
	Metadata           map[string]string     `json:"metadata,omitempty"`
}

// OfficialInput is the question and its references.
type OfficialInput struct {
	Raw       string   `json:"raw"`
	Reference []string `json:"reference"`
	Choices   []string `json:"choices,omitempty"`
}

// OfficialOutput is the answer.
type OfficialOutput struct {
	Raw []string `json:"raw"`
}

// OfficialMessage is one turn of an agentic answer's transcript.
type OfficialMessage struct {
	TurnIdx    int                `json:"turn_idx"`
	Role       string             `json:"role"`
	Content    *string            `json:"content"`
	ToolCalls  []OfficialToolCall `json:"tool_calls,omitempty"`
	ToolCallID []string           `json:"tool_call_id,omitempty"`
}

// OfficialToolCall is a tool an agent called, its arguments as strings.
type OfficialToolCall struct {
	ID        string            `json:"id"`
	Name      string            `json:"name"`
	Arguments map[string]string `json:"arguments,omitempty"`
}

// OfficialAttribution is how the scored value came from the answer: the
// tool calls along the way, then the answer.
type OfficialAttribution struct {
	TurnIdx          int    `json:"turn_idx"`
	Source           string `json:"source"`
	ExtractedValue   string `json:"extracted_value"`
	ExtractionMethod string `json:"extraction_method"`
	IsTerminal       bool   `json:"is_terminal"`
}

// OfficialEvaluation is the line's score.
type OfficialEvaluation struct {
	Score          float64 `json:"score"`
	IsCorrect      bool    `json:"is_correct"`
	NumTurns       *int    `json:"num_turns,omitempty"`
	ToolCallsCount *int    `json:"tool_calls_count,omitempty"`
}

// OfficialTokens are the answer's tokens.
type OfficialTokens struct {
	InputTokens           int  `json:"input_tokens"`
	OutputTokens          int  `json:"output_tokens"`
	TotalTokens           int  `json:"total_tokens"`
	InputTokensCacheWrite *int `json:"input_tokens_cache_write,omitempty"`
	InputTokensCacheRead  *int `json:"input_tokens_cache_read,omitempty"`
}

// OfficialPerformance is the answer's latency.
type OfficialPerformance struct {
	LatencyMS *float64 `json:"latency_ms,omitempty"`
}

// The metadata keys assay writes on an instance line, all strings as the
// schema wants: with them an import gives back the same report.
const (
	metaCondition  = "assay_condition"
	metaRepetition = "assay_repetition"
	metaEvaluator  = "assay_evaluator"
	metaMetric     = "assay_metric"
	metaJudgements = "assay_judgements" // the line's metric's judgements, as JSON
	metaClaims     = "assay_unverified_claims"
	metaCost       = "assay_cost_usd"
	metaErrorKind  = "assay_error_kind"
	metaTools      = "assay_tool_calls" // the answer's tool calls, as JSON
	metaModel      = "assay_model"
	// metaConditions lists every condition of the run, as JSON, in the
	// aggregate's source_metadata: evaluation_results name only those
	// with a score, and a condition whose every answer failed has none.
	metaConditions = "assay_conditions"
)

// lineJudgement is one judge call's score of the line's metric.
type lineJudgement struct {
	Evaluator       string   `json:"evaluator"`
	Judge           string   `json:"judge,omitempty"`
	JudgeIndex      int      `json:"judge_index,omitempty"`
	JudgeRepetition int      `json:"judge_repetition,omitempty"`
	Seed            *int     `json:"seed,omitempty"`
	Score           *float64 `json:"score,omitempty"`
	Reasoning       string   `json:"reasoning,omitempty"`
	Error           string   `json:"error,omitempty"`
	ErrorKind       string   `json:"error_kind,omitempty"`
	Raw             string   `json:"raw,omitempty"`
	Detail          string   `json:"detail,omitempty"`
	CostUSD         float64  `json:"cost_usd,omitempty"`
	TokensIn        int      `json:"tokens_in,omitempty"`
	TokensOut       int      `json:"tokens_out,omitempty"`
	LatencyMS       int64    `json:"latency_ms,omitempty"`
}

// transcript is an agentic answer as messages: the question, an
// assistant turn per tool call (with what the agent wrote before it)
// followed by the tool's result, the answer.
func transcript(question string, r *store.Result) []OfficialMessage {
	text := func(s string) *string { return &s }
	msgs := []OfficialMessage{{TurnIdx: 0, Role: "user", Content: text(question)}}
	for i, tc := range r.ToolCalls {
		id := fmt.Sprintf("call_%d", i+1)
		call := OfficialToolCall{ID: id, Name: strings.TrimPrefix(tc.Server+"/"+tc.Tool, "/")}
		var args map[string]any
		if json.Unmarshal(tc.Arguments, &args) == nil && len(args) > 0 {
			call.Arguments = map[string]string{}
			for k, v := range args {
				if s, ok := v.(string); ok {
					call.Arguments[k] = s
				} else {
					b, _ := json.Marshal(v)
					call.Arguments[k] = string(b)
				}
			}
		}
		var thought *string
		if tc.Thought != "" {
			thought = text(tc.Thought)
		}
		msgs = append(msgs, OfficialMessage{TurnIdx: len(msgs), Role: "assistant", Content: thought, ToolCalls: []OfficialToolCall{call}},
			OfficialMessage{TurnIdx: len(msgs) + 1, Role: "tool", Content: text(tc.Result), ToolCallID: []string{id}})
	}
	var answer *string
	if r.Response != "" {
		answer = text(r.Response)
	}
	return append(msgs, OfficialMessage{TurnIdx: len(msgs), Role: "assistant", Content: answer})
}

// resultID names the aggregate result of a metric under a condition.
func resultID(condition string, m report.Metric) string {
	return condition + "/" + metricID(m)
}

func metricID(m report.Metric) string { return m.Evaluator + "." + m.Name }

// officialLines are the lines of one answer: a line per metric it was
// scored on (or failed to be), or one line for an answer that failed.
func (ex *exporter) officialLines(s *store.Sample, r *store.Result) []OfficialInstance {
	base := ex.officialBase(s, r)
	turns, calls := turnsOf(r), len(r.ToolCalls)
	if r.Error != "" {
		line := base
		msg := r.Error
		line.Error = &msg
		line.Metadata[metaErrorKind] = string(r.ErrorKind)
		line.AnswerAttribution = attributionOf(r, &base, "none", "")
		line.Evaluation = OfficialEvaluation{Score: 0, IsCorrect: false, NumTurns: &turns, ToolCallsCount: &calls}
		return []OfficialInstance{line}
	}
	var claims []string
	for _, j := range r.Judgements {
		claims = append(claims, j.UnverifiedClaims...)
	}
	var out []OfficialInstance
	for _, m := range ex.rep.Metrics {
		judged, scored, judgeErr := lineJudgements(r, m)
		if len(judged) == 0 {
			continue // not judged: the judge sample rate passed it over
		}
		line := base
		line.Metadata = clone(base.Metadata)
		line.EvaluationResultID = resultID(r.Condition, m)
		line.Metadata[metaEvaluator], line.Metadata[metaMetric] = m.Evaluator, m.Name
		js, _ := json.Marshal(judged)
		line.Metadata[metaJudgements] = string(js)
		if len(claims) > 0 {
			c, _ := json.Marshal(claims)
			line.Metadata[metaClaims] = string(c)
		}
		method := m.Evaluator
		if e := config.Evaluator(m.Evaluator); e.UsesJudge() || !e.Valid() && !config.IsAssertion(e) {
			method = "llm_judge"
		}
		line.AnswerAttribution = attributionOf(r, &base, method, r.Response)
		line.Evaluation = OfficialEvaluation{NumTurns: &turns, ToolCallsCount: &calls}
		if len(scored) > 0 {
			line.Evaluation.Score = report.Mean(scored)
			lo, hi := m.Scale.Bounds()
			line.Evaluation.IsCorrect = line.Evaluation.Score >= (lo+hi)/2
		} else {
			msg := "judge: " + judgeErr
			line.Error = &msg
		}
		out = append(out, line)
	}
	return out
}

// officialBase is what every line of an answer says: its sample, its
// answer (a single-turn answer its output, an agentic one a transcript —
// the question, each tool call and its result, then the answer), tokens,
// latency and assay's metadata.
func (ex *exporter) officialBase(s *store.Sample, r *store.Result) OfficialInstance {
	base := OfficialInstance{
		SchemaVersion: instanceVersion(ex.eeeVersion), EvaluationID: ex.id, ModelID: firstNonEmpty(r.Model, ex.modelID()),
		EvaluationName: ex.evaluationName(r.Condition), SampleID: s.SampleID, InteractionType: "single_turn",
		Input:  OfficialInput{Raw: s.Input, Reference: []string{s.Reference}, Choices: s.Choices},
		Output: &OfficialOutput{Raw: []string{r.Response}},
		Metadata: map[string]string{metaCondition: r.Condition, metaRepetition: strconv.Itoa(r.Repetition),
			metaCost: strconv.FormatFloat(r.CostUSD, 'g', -1, 64), metaModel: r.Model},
	}
	if len(r.ToolCalls) > 0 || len(ex.conds[r.Condition].MCPServers) > 0 || ex.rep.Config.Agent.Type.RunsProgram() {
		base.InteractionType = "agentic"
	}
	if len(r.ToolCalls) > 0 {
		calls, _ := json.Marshal(r.ToolCalls)
		base.Metadata[metaTools] = string(calls)
	}
	tokens := &OfficialTokens{InputTokens: r.TokensIn, OutputTokens: r.TokensOut, TotalTokens: r.TokensIn + r.TokensOut}
	if r.CacheReadTokens > 0 || r.CacheWriteTokens > 0 {
		read, write := r.CacheReadTokens, r.CacheWriteTokens
		tokens.InputTokensCacheRead, tokens.InputTokensCacheWrite = &read, &write
	}
	base.TokenUsage = tokens
	latency := float64(r.LatencyMS)
	base.Performance = &OfficialPerformance{LatencyMS: &latency}
	if base.InteractionType == "agentic" {
		base.Output = nil
		base.Messages = transcript(s.Input, r)
	}
	return base
}

// attributionOf points into an answer's line: each tool call's result,
// then the answer (value, extracted by method) — the output, or the
// transcript's last message.
func attributionOf(r *store.Result, base *OfficialInstance, method, value string) []OfficialAttribution {
	source, turn := "output.raw", 0
	if base.Messages != nil {
		turn = len(base.Messages) - 1
		source = fmt.Sprintf("messages[%d].content", turn)
	}
	var out []OfficialAttribution
	for i, tc := range r.ToolCalls {
		out = append(out, OfficialAttribution{TurnIdx: 2 + 2*i, Source: "tool:" + strings.TrimPrefix(tc.Server+"/"+tc.Tool, "/"),
			ExtractedValue: tc.Result, ExtractionMethod: "tool_call"})
	}
	return append(out, OfficialAttribution{TurnIdx: turn, Source: source, ExtractedValue: value, ExtractionMethod: method, IsTerminal: true})
}

// lineJudgements are an answer's judgements by metric m's evaluator, as a
// line's metadata keeps them, the scores they gave m, and the first error.
func lineJudgements(r *store.Result, m report.Metric) (judged []lineJudgement, scored []float64, judgeErr string) {
	for _, j := range r.Judgements {
		if j.Evaluator != m.Evaluator {
			continue
		}
		lj := lineJudgement{Evaluator: j.Evaluator, Judge: j.Judge, JudgeIndex: j.JudgeIndex, JudgeRepetition: j.JudgeRepetition,
			Seed: j.Seed, Error: j.Error, ErrorKind: string(j.ErrorKind), Raw: j.Raw, Detail: j.Detail, CostUSD: j.CostUSD,
			TokensIn: j.TokensIn, TokensOut: j.TokensOut, LatencyMS: j.LatencyMS}
		for _, sc := range j.Scores {
			if sc.Metric == m.Name {
				v := sc.Value
				lj.Score, lj.Reasoning = &v, sc.Reasoning
				scored = append(scored, v)
			}
		}
		if j.Error != "" && judgeErr == "" {
			judgeErr = j.Error
		}
		judged = append(judged, lj)
	}
	return judged, scored, judgeErr
}

// conditionsJSON names every condition of the run, in its order, as JSON.
func (ex *exporter) conditionsJSON() string {
	names := make([]string, len(ex.rep.Run.Conditions))
	for i, c := range ex.rep.Run.Conditions {
		names[i] = c.Name
	}
	b, _ := json.Marshal(names)
	return string(b)
}

// officialAggregate is the run's aggregate file in the official schema.
func (ex *exporter) officialAggregate(cfg *config.Config, version, ts string, samples, rows int, instancesFile, checksum string) *OfficialAggregate {
	agg := &OfficialAggregate{
		SchemaVersion: ex.eeeVersion, EvaluationID: ex.id, EvaluationTimestamp: ts, RetrievedTimestamp: ts,
		SourceMetadata: OfficialSource{SourceName: "assay", SourceType: "evaluation_run", SourceOrganization: "assay", EvaluatorRelationship: "other",
			AdditionalDetails: map[string]string{"assay_run_id": strconv.FormatInt(ex.rep.Run.ID, 10), "assay_run_name": ex.rep.Run.Name,
				"assay_repetitions": strconv.Itoa(ex.rep.Run.Repetitions), "assay_judge_repetitions": strconv.Itoa(max(cfg.JudgeRepetitions, 1)),
				"assay_dataset_kind": string(ex.rep.Dataset.Kind), metaConditions: ex.conditionsJSON()}},
		EvalLibrary: OfficialLibrary{Name: "assay", Version: version},
		ModelInfo:   unknownModel(ex.modelID()),
		Detailed: &OfficialDetailed{Format: "jsonl", FilePath: instancesFile, HashAlgorithm: "sha256", Checksum: checksum,
			TotalRows: rows},
	}
	var judges []OfficialJudge
	for _, j := range cfg.Panel() {
		if j.Model == "" {
			continue // a run imported from files that name no judge
		}
		t := j.Temperature
		oj := OfficialJudge{ModelInfo: unknownModel(j.Model), Temperature: &t,
			AdditionalDetails: map[string]string{"name": j.Name, "seed": strconv.Itoa(j.Seed)}}
		judges = append(judges, oj)
	}
	mode := "average"
	if cfg.Mode() == config.PanelMedian {
		mode = "median"
	}
	for _, c := range ex.rep.Summary.Conditions {
		for _, ms := range c.Metrics {
			m := ex.rep.Metrics[ex.rep.MetricIndex(ms.Evaluator, ms.Name)]
			lo, hi := m.Scale.Bounds()
			mc := OfficialMetricConfig{EvaluationDescription: fmt.Sprintf("%s under %s, each answer's score the mean of its judgements", m.Label(), c.Name),
				MetricID: metricID(m), MetricName: m.Name, ScoreType: "continuous", MinScore: &lo, MaxScore: &hi,
				AdditionalDetails: map[string]string{"assay_evaluator": m.Evaluator, "assay_scale": m.Scale.String()}}
			if m.Scale == config.ScalePass {
				mc.ScoreType = "binary"
			}
			if e := config.Evaluator(m.Evaluator); len(judges) > 0 && (e.UsesJudge() || !e.Valid() && !config.IsAssertion(e)) {
				mc.LLMScoring = &OfficialLLMScoring{Judges: judges, InputPrompt: "assay's " + m.Evaluator + " instructions (see assay's README)", AggregationMethod: mode}
			}
			std := ms.Std
			agg.EvaluationResults = append(agg.EvaluationResults, OfficialResult{
				EvaluationResultID: resultID(c.Name, m), EvaluationName: ex.evaluationName(c.Name), EvaluationTimestamp: ts,
				SourceData: OfficialSourceData{DatasetName: ex.rep.Dataset.Name, SourceType: "other",
					AdditionalDetails: map[string]string{"dataset_sha256": ex.rep.Dataset.SHA256, "samples_number": strconv.Itoa(samples)}},
				MetricConfig: mc,
				ScoreDetails: OfficialScoreDetails{Score: ms.Mean,
					Details: map[string]string{"n": strconv.Itoa(ms.N), "samples": strconv.Itoa(ms.Samples),
						"repetition_spread": strconv.FormatFloat(ms.RepetitionSpread, 'g', -1, 64),
						"errors":            strconv.Itoa(c.Errors), "judge_errors": strconv.Itoa(c.JudgeErrors),
						"cost_usd": strconv.FormatFloat(c.CostUSD, 'g', -1, 64)},
					Uncertainty: &OfficialUncertainty{
						StandardError:      &OfficialStandardError{Value: ms.Stderr, Method: "analytic, samples as clusters"},
						ConfidenceInterval: &OfficialInterval{Lower: ms.CI95[0], Upper: ms.CI95[1], ConfidenceLevel: 0.95, Method: "t, samples as clusters"},
						StandardDeviation:  &std, NumSamples: ms.Samples}},
				GenerationConfig: &OfficialGenerationConfig{AdditionalDetails: map[string]string{
					"judge_model": cfg.Judge.Model, "judge_temperature": strconv.FormatFloat(cfg.Judge.Temperature, 'g', -1, 64),
					"num_repetitions": strconv.Itoa(ex.rep.Run.Repetitions)}},
			})
		}
	}
	return agg
}

func clone(m map[string]string) map[string]string {
	out := make(map[string]string, len(m)+4)
	for k, v := range m {
		out[k] = v
	}
	return out
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
