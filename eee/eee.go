// Package eee reads and writes EEE result files (Every Eval Ever, schema
// 0.2.1), as k-eval writes them: an aggregate JSON with one evaluation
// result per condition, and an instance JSONL with one line per sample and
// condition holding every repetition. assay exports its runs in them, with
// its own figures (CI, errors, cost) in the free-form details, and imports
// them as finished, read-only runs.
package eee

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// The schema versions read and written.
const (
	AggregateVersion = "0.2.1"
	InstanceVersion  = "instance_level_eval_0.2.1"
)

// Aggregate is the aggregate JSON file.
type Aggregate struct {
	SchemaVersion      string             `json:"schema_version"`
	EvaluationID       string             `json:"evaluation_id"`
	RetrievedTimestamp string             `json:"retrieved_timestamp"` // Unix seconds
	SourceMetadata     SourceMetadata     `json:"source_metadata"`
	ModelInfo          ModelInfo          `json:"model_info"`
	EvalLibrary        EvalLibrary        `json:"eval_library"`
	EvaluationResults  []EvaluationResult `json:"evaluation_results"`
	Detailed           Detailed           `json:"detailed_evaluation_results"`
}

// SourceMetadata says who made the evaluation.
type SourceMetadata struct {
	SourceName            string `json:"source_name"`
	SourceType            string `json:"source_type"`
	SourceOrganization    string `json:"source_organization_name"`
	EvaluatorRelationship string `json:"evaluator_relationship"`
}

// ModelInfo names the model evaluated.
type ModelInfo struct {
	ID                string  `json:"id"`
	Name              string  `json:"name"`
	Developer         *string `json:"developer"`
	InferencePlatform *string `json:"inference_platform"`
}

// EvalLibrary names the tool that made the files.
type EvalLibrary struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// EvaluationResult is one condition's aggregate.
type EvaluationResult struct {
	EvaluationName      string         `json:"evaluation_name"` // CONFIG/CONDITION
	EvaluationTimestamp string         `json:"evaluation_timestamp"`
	SourceData          SourceData     `json:"source_data"`
	MetricConfig        MetricConfig   `json:"metric_config"`
	ScoreDetails        ScoreDetails   `json:"score_details"`
	GenerationConfig    map[string]any `json:"generation_config"`
}

// SourceData names the dataset by the SHA-256 of its file.
type SourceData struct {
	SourceType    string `json:"source_type"`
	DatasetSHA256 string `json:"dataset_sha256"`
	SamplesNumber int    `json:"samples_number"`
}

// MetricConfig describes the scores.
type MetricConfig struct {
	EvaluationDescription string  `json:"evaluation_description"`
	LowerIsBetter         bool    `json:"lower_is_better"`
	ScoreType             string  `json:"score_type"`
	MinScore              float64 `json:"min_score"`
	MaxScore              float64 `json:"max_score"`
}

// ScoreDetails holds the figures: METRIC_mean and METRIC_stddev, as k-eval
// writes them, and assay's own beside them.
type ScoreDetails struct {
	Score   *float64       `json:"score"`
	Details map[string]any `json:"details"`
}

// Detailed points at the instance file.
type Detailed struct {
	FilePath *string `json:"file_path"`
	Format   string  `json:"format"`
	Checksum string  `json:"checksum"`
}

// Instance is one line of the instance file: one sample under one
// condition, every repetition.
type Instance struct {
	SchemaVersion   string    `json:"schema_version"`
	EvaluationID    string    `json:"evaluation_id"`
	ModelID         string    `json:"model_id"`
	EvaluationName  string    `json:"evaluation_name"`
	SampleIdx       SampleIdx `json:"sample_idx"`
	InteractionType string    `json:"interaction_type"`
	Input           Input     `json:"input"`
	Output          Output    `json:"output"`
	// AnswerAttribution is k-eval 1.1's trace of each repetition.
	AnswerAttribution []Attribution `json:"answer_attribution,omitempty"`
	Evaluation        Evaluation    `json:"evaluation"`
	TokenUsage        TokenUsage    `json:"token_usage"`
	RunDetails        []Run         `json:"run_details"`

	extra map[string]json.RawMessage // the fields assay does not read, when kept
}

// SampleIdx is a sample's 0-based position in the dataset file. k-eval
// writes it as a string; a number is read too.
type SampleIdx int

// MarshalJSON writes the index as a string, as k-eval does.
func (s SampleIdx) MarshalJSON() ([]byte, error) {
	return json.Marshal(strconv.Itoa(int(s)))
}

// UnmarshalJSON reads "3" or 3.
func (s *SampleIdx) UnmarshalJSON(b []byte) error {
	var text string
	if err := json.Unmarshal(b, &text); err != nil {
		text = string(bytes.TrimSpace(b))
	}
	n, err := strconv.Atoi(text)
	if err != nil || n < 0 {
		return fmt.Errorf("sample_idx %s: want a whole number ≥ 0", b)
	}
	*s = SampleIdx(n)
	return nil
}

// Input is the question and its golden answer.
type Input struct {
	Raw       string `json:"raw"`
	Reference string `json:"reference"`
}

// Output holds each repetition's answer (k-eval before 1.1: raw_runs), or
// the first repetition's answer and its reasoning (k-eval 1.1: raw and
// reasoning_trace, every repetition's answer then in run_details).
type Output struct {
	RawRuns        []string `json:"raw_runs,omitempty"`
	Raw            string   `json:"raw,omitempty"`
	ReasoningTrace *string  `json:"reasoning_trace,omitempty"` // k-eval 1.1 writes it, "" for none
}

// Attribution is one entry of k-eval 1.1's answer_attribution: a step of a
// repetition — an MCP tool's call and result, or the agent's own text.
type Attribution struct {
	RepetitionIndex  int             `json:"repetition_index"`
	TurnIdx          int             `json:"turn_idx"`
	Source           string          `json:"source"` // mcp_tool or agent_reasoning
	ExtractedValue   string          `json:"extracted_value"`
	ExtractionMethod string          `json:"extraction_method"`
	IsTerminal       bool            `json:"is_terminal"`
	ToolName         string          `json:"tool_name,omitempty"`
	ToolInput        json.RawMessage `json:"tool_input,omitempty"` // the call's arguments, an object
	ToolError        json.RawMessage `json:"tool_error,omitempty"` // k-eval's flag; a message or null read too
	// DurationMS is k-eval's float of milliseconds, or null for a call
	// that got no answer (kept as written: null is written too).
	DurationMS json.RawMessage `json:"duration_ms,omitempty"`
}

// millis reads duration_ms: 0 for null or none.
func (a Attribution) millis() float64 {
	var ms *float64
	if json.Unmarshal(a.DurationMS, &ms) != nil || ms == nil {
		return 0
	}
	return *ms
}

// arguments is tool_input as a tool call's arguments: nil for none.
func (a Attribution) arguments() json.RawMessage {
	if len(a.ToolInput) == 0 || string(a.ToolInput) == "null" {
		return nil
	}
	return a.ToolInput
}

// failed reads tool_error: true, or a message, is a failure.
func (a Attribution) failed() bool {
	var flag bool
	if json.Unmarshal(a.ToolError, &flag) == nil {
		return flag
	}
	var msg string
	return json.Unmarshal(a.ToolError, &msg) == nil && msg != ""
}

// Evaluation holds the sample's figures under the condition:
// METRIC_mean, METRIC_stddev, METRIC_reasonings, unverified_claims.
type Evaluation struct {
	Score   *float64       `json:"score"`
	Details map[string]any `json:"details"`
}

// TokenUsage sums the repetitions' tokens; null when one is unknown.
type TokenUsage struct {
	InputTokens  *int `json:"input_tokens"`
	OutputTokens *int `json:"output_tokens"`
}

// Run is one repetition: the fields k-eval writes, each metric's score by
// its name, and assay's error fields.
type Run struct {
	RepetitionIndex int
	AgentResponse   string
	ReasoningTrace  *string // k-eval 1.1: the agent's text before its answer; nil before 1.1
	CostUSD         *float64
	DurationMS      *int64
	NumTurns        *int
	Scores          map[string]*float64 // by metric; nil for none
	Error           string              // the agent's error (assay)
	ErrorKind       string
	JudgeError      string // the judge's error (assay)
}

// runFields are the keys of a run detail that are not metrics.
var runFields = map[string]bool{"repetition_index": true, "agent_response": true, "reasoning_trace": true, "cost_usd": true,
	"duration_ms": true, "num_turns": true, "error": true, "error_kind": true, "judge_error": true}

// MarshalJSON writes the run as k-eval does, metrics after its fields.
func (r Run) MarshalJSON() ([]byte, error) {
	m := map[string]any{"repetition_index": r.RepetitionIndex, "agent_response": r.AgentResponse,
		"cost_usd": r.CostUSD, "duration_ms": r.DurationMS, "num_turns": r.NumTurns}
	if r.ReasoningTrace != nil {
		m["reasoning_trace"] = *r.ReasoningTrace
	}
	for k, v := range r.Scores {
		m[k] = v
	}
	for k, v := range map[string]string{"error": r.Error, "error_kind": r.ErrorKind, "judge_error": r.JudgeError} {
		if v != "" {
			m[k] = v
		}
	}
	return json.Marshal(m)
}

// UnmarshalJSON reads a run: its known fields, and every other number or
// null as a metric's score.
func (r *Run) UnmarshalJSON(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	fields := []struct {
		key string
		dst any
	}{{"repetition_index", &r.RepetitionIndex}, {"agent_response", &r.AgentResponse}, {"reasoning_trace", &r.ReasoningTrace}, {"cost_usd", &r.CostUSD},
		{"duration_ms", &r.DurationMS}, {"num_turns", &r.NumTurns}, {"error", &r.Error}, {"error_kind", &r.ErrorKind},
		{"judge_error", &r.JudgeError}}
	for _, f := range fields {
		if v, ok := m[f.key]; ok && string(v) != "null" {
			if err := json.Unmarshal(v, f.dst); err != nil {
				return fmt.Errorf("run_details.%s: %w", f.key, err)
			}
		}
	}
	r.Scores = map[string]*float64{}
	for k, v := range m {
		if runFields[k] {
			continue
		}
		// A number or null is a metric's score; another tool's field of
		// another kind (a text, a list) is no metric, and no error.
		var f *float64
		if json.Unmarshal(v, &f) == nil {
			r.Scores[k] = f
		}
	}
	return nil
}
