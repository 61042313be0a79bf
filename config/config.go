// Package config reads the run configuration file of `assay run --config`.
//
// The format is a superset of k-eval's run configuration: a k-eval file loads
// unchanged except for agent.type, since assay drives an OpenAI-compatible
// API or an external command rather than the Claude Code SDK. Decoding is
// strict: an unknown key, a value of the wrong type or a value out of range
// is an error that names the file, line and full key path.
//
// ${NAME} and ${NAME:-default} in string values are replaced from the
// environment when the file is read, with one exception: values under
// mcp_servers keep their references as written and are resolved only when a
// run starts (see ResolveMCPServer). MCP server env and headers are where
// secrets live; keeping them unexpanded means a loaded config, its snapshot
// and anything derived from them never hold a secret, and a config can be
// checked on a machine that does not have the secrets.
package config

import (
	"regexp"
	"slices"
	"strings"

	"assay"
)

// AgentType is how assay reaches the agent under test.
type AgentType string

// The agent types assay supports.
const (
	AgentOpenAI     AgentType = "openai"      // an OpenAI-compatible chat API with a tool loop
	AgentCommand    AgentType = "command"     // an external command (any CLI)
	AgentClaudeCode AgentType = "claude_code" // the Claude Code CLI, run as k-eval runs it
	AgentAnthropic  AgentType = "anthropic"   // the Anthropic Messages API with a tool loop
)

// AgentClaudeCodeSDK is k-eval's name for the Claude Code agent; a run file
// that says it gets AgentClaudeCode.
const AgentClaudeCodeSDK AgentType = "claude_code_sdk"

// RunsProgram reports whether the agent starts a program on this machine.
func (t AgentType) RunsProgram() bool { return t == AgentCommand || t == AgentClaudeCode }

// Evaluator names how a response is scored.
type Evaluator string

// The evaluators.
const (
	EvalRubric        Evaluator = "rubric"         // k-eval's 1–5 judge
	EvalArbiter       Evaluator = "arbiter"        // 0–1 semantic and factuality judge
	EvalExactMatch    Evaluator = "exact_match"    // multiple-choice letter
	EvalNumericMatch  Evaluator = "numeric_match"  // final number of a math answer
	EvalCodeExecution Evaluator = "code_execution" // completion run against the tests
)

// Evaluators lists every evaluator.
var Evaluators = []Evaluator{EvalRubric, EvalArbiter, EvalExactMatch, EvalNumericMatch, EvalCodeExecution}

// UsesJudge reports whether e calls an LLM judge.
func (e Evaluator) UsesJudge() bool {
	_, custom := e.Rubric()
	return e == EvalRubric || e == EvalArbiter || custom
}

// Valid reports whether e is one of assay's evaluators.
func (e Evaluator) Valid() bool {
	_, custom := e.Rubric()
	return slices.Contains(Evaluators, e) || custom
}

// Kind is the only kind of dataset e scores, or "" when it scores every kind.
func (e Evaluator) Kind() assay.Kind {
	switch e {
	case EvalExactMatch:
		return assay.KindMCQ
	case EvalNumericMatch:
		return assay.KindMath
	case EvalCodeExecution:
		return assay.KindCode
	}
	return ""
}

// CheckEvaluators refuses a list of evaluators that cannot score a dataset
// of kind: an empty list, an unknown evaluator, or one made for another kind.
// Its error is an *assay.Error (EINVALID) a page can show.
func CheckEvaluators(list []Evaluator, kind assay.Kind) error {
	if len(list) == 0 {
		return assay.Errorf(assay.EINVALID, "evaluators: choose at least one")
	}
	for _, ev := range list {
		switch {
		case !ev.Valid():
			return assay.Errorf(assay.EINVALID, "evaluators: unknown evaluator %q (want one of %s)", ev, joinEvaluators())
		case ev.Kind() != "" && ev.Kind() != kind:
			return assay.Errorf(assay.EINVALID, "evaluators: %s scores %s datasets, and this dataset is %s", ev, ev.Kind(), kind)
		}
	}
	return nil
}

// DefaultEvaluators returns the evaluators used for a dataset of kind k when
// the config names none.
func DefaultEvaluators(k assay.Kind) []Evaluator {
	switch k {
	case assay.KindMCQ:
		return []Evaluator{EvalExactMatch}
	case assay.KindMath:
		return []Evaluator{EvalNumericMatch}
	case assay.KindCode:
		return []Evaluator{EvalCodeExecution}
	default:
		return []Evaluator{EvalRubric}
	}
}

// Config is one run configuration file, decoded, checked and with defaults
// applied. Field tags give the YAML keys; "keyed" marks a YAML mapping read
// into a list in file order, its keys becoming Name; "raw" marks a subtree
// whose ${...} references are kept as written.
type Config struct {
	Name    string  `yaml:"name" json:"name"`
	Version string  `yaml:"version" json:"version"`
	Dataset Dataset `yaml:"dataset" json:"dataset"`
	Agent   Agent   `yaml:"agent" json:"agent"`
	Judge   Judge   `yaml:"judge" json:"judge"`
	// Judges is a judge panel: every judged answer is scored by each. The
	// file's judges: list; judge is then its first. Empty for one judge.
	Judges []Judge `yaml:"judges" json:"judges,omitempty"`
	// PanelMode combines a panel's scores of one answer for the headline
	// figures: mean (default), median or first.
	PanelMode      string          `yaml:"panel" json:"panel,omitempty"`
	MCPServers     []MCPServer     `yaml:"mcp_servers,keyed,raw" json:"mcp_servers"`
	ConditionSpecs []ConditionSpec `yaml:"conditions,keyed" json:"conditions"`
	Execution      Execution       `yaml:"execution" json:"execution"`
	Evaluators     []Evaluator     `yaml:"evaluators" json:"evaluators"` // empty: DefaultEvaluators of the dataset's kind
	// Assertions are the evaluators items written as one-key mappings
	// ({contains: "text"}): deterministic checks, each a metric of its own.
	Assertions []Assertion `yaml:"-" json:"assertions,omitempty"`
	// Rubrics are the run's own rubrics, by name; {judge: NAME} in the
	// evaluators scores with one.
	Rubrics   []Rubric `yaml:"rubrics,keyed" json:"rubrics,omitempty"`
	BudgetUSD float64  `yaml:"budget_usd" json:"budget_usd"` // 0: no budget
	// AllowUnpriced lets a run with a budget call models without a price,
	// their calls counted as free; without it such a run is refused.
	AllowUnpriced    bool             `yaml:"allow_unpriced" json:"allow_unpriced,omitempty"`
	JudgeSampleRate  float64          `yaml:"judge_sample_rate" json:"judge_sample_rate"`
	JudgeRepetitions int              `yaml:"judge_repetitions" json:"judge_repetitions"`
	Prices           map[string]Price `yaml:"prices" json:"prices,omitempty"`
	CodeExecution    CodeExecution    `yaml:"code_execution" json:"code_execution"`
	Prompts          Prompts          `yaml:"prompts" json:"prompts"`
	Report           ReportSettings   `yaml:"report" json:"report,omitempty"`
	// Stop is the run's stopping rule; nil: the whole plan.
	Stop *Stop `yaml:"stop" json:"stop,omitempty"`
	// Batch sends calls through the providers' batch APIs; nil: every call live.
	Batch *Batch `yaml:"batch" json:"batch,omitempty"`

	// Dir is the folder of the config file; relative paths were resolved
	// against it.
	Dir string `yaml:"-" json:"-"`

	refs map[string]ref // values written as ${...} references, by key path; see Redacted
}

// Dataset says which file of samples to run and how to read it.
type Dataset struct {
	Path        string     `yaml:"path" json:"path"`
	QuestionKey string     `yaml:"question_key" json:"question_key"`
	AnswerKey   string     `yaml:"answer_key" json:"answer_key"`
	Kind        assay.Kind `yaml:"kind" json:"kind"` // empty: detected from the samples
}

// Agent configures the system under test, held constant across the run.
type Agent struct {
	Type           AgentType `yaml:"type" json:"type"`
	Model          string    `yaml:"model" json:"model"`
	BaseURL        string    `yaml:"base_url" json:"base_url"`       // empty: OpenAI's API
	APIKeyEnv      string    `yaml:"api_key_env" json:"api_key_env"` // name of the variable, never the key
	Temperature    *float64  `yaml:"temperature" json:"temperature"` // nil: the server's default
	MaxTokens      int       `yaml:"max_tokens" json:"max_tokens"`   // 0: the server's default
	MaxTurns       int       `yaml:"max_turns" json:"max_turns"`
	TimeoutSeconds int       `yaml:"timeout_seconds" json:"timeout_seconds"` // deadline for one answer, all turns
	Command        []string  `yaml:"command" json:"command"`                 // for type command
	// Env sets variables for a command agent, which otherwise sees only
	// PATH, HOME, the locale and the ASSAY_* variables: never the keys of
	// the judge or of assay. Values may hold ${NAME} references, kept as
	// written and resolved when the run starts.
	Env map[string]string `yaml:"env,raw" json:"env,omitempty"`
	// Passed names the variables of the environment passed on to Claude
	// Code when the run was made (its own: provider, region, proxies), for
	// the run's page; names only. Set by assay, never read from a file.
	Passed []string `yaml:"-" json:"passed,omitempty"`
	// Models makes the run's models an axis like its conditions: every
	// sample is answered under every condition by each model. Each model
	// overrides the agent's model, base_url, api_key_env, temperature and
	// max_tokens. Empty: the agent's one model.
	Models []AgentModel `yaml:"models" json:"models,omitempty"`
}

// AgentModel is one of the agent's models in a run over several.
type AgentModel struct {
	Name        string   `yaml:"name" json:"name"` // as reports show it; the model's when empty
	Model       string   `yaml:"model" json:"model"`
	BaseURL     string   `yaml:"base_url" json:"base_url,omitempty"`
	APIKeyEnv   string   `yaml:"api_key_env" json:"api_key_env,omitempty"`
	Temperature *float64 `yaml:"temperature" json:"temperature,omitempty"`
	MaxTokens   int      `yaml:"max_tokens" json:"max_tokens,omitempty"`
}

// WithModel is the agent as one of its models answers: that model's
// settings over the agent's.
func (a Agent) WithModel(m AgentModel) Agent {
	a.Model = m.Model
	if m.BaseURL != "" {
		a.BaseURL = m.BaseURL
	}
	if m.APIKeyEnv != "" {
		a.APIKeyEnv = m.APIKeyEnv
	}
	if m.Temperature != nil {
		a.Temperature = m.Temperature
	}
	if m.MaxTokens > 0 {
		a.MaxTokens = m.MaxTokens
	}
	a.Models = nil
	return a
}

// Judge configures the LLM that scores answers, with pinned parameters.
type Judge struct {
	// Name tells a panel's judges apart; a panel judge without one is called
	// by its model.
	Name string `yaml:"name" json:"name,omitempty"`
	// Type is the API: openai (any OpenAI-compatible server) or anthropic;
	// empty takes it from a LiteLLM-style model prefix, else openai.
	Type        Provider `yaml:"type" json:"type,omitempty"`
	Model       string   `yaml:"model" json:"model"`
	BaseURL     string   `yaml:"base_url" json:"base_url"`
	APIKeyEnv   string   `yaml:"api_key_env" json:"api_key_env"`
	Temperature float64  `yaml:"temperature" json:"temperature"`
	Seed        int      `yaml:"seed" json:"seed"`
	// VarySeed asks judge repetition k with seed + k, to measure the judge's
	// sampling variance; false asks every repetition with the pinned seed,
	// so that they measure the variance pinning leaves.
	VarySeed       bool `yaml:"vary_seed" json:"vary_seed,omitempty"`
	TimeoutSeconds int  `yaml:"timeout_seconds" json:"timeout_seconds"` // deadline for one judge call
}

// MCPServer is one MCP server as written in the file: its values may hold
// ${...} references.
type MCPServer struct {
	Name    string            `yaml:"-" json:"name"`
	Type    assay.Transport   `yaml:"type" json:"type"`
	Command string            `yaml:"command" json:"command,omitempty"`
	Args    []string          `yaml:"args" json:"args,omitempty"`
	Env     map[string]string `yaml:"env" json:"env,omitempty"`
	URL     string            `yaml:"url" json:"url,omitempty"`
	Headers map[string]string `yaml:"headers" json:"headers,omitempty"`
}

// ConditionSpec is one condition as written in the file; Conditions resolves
// its MCP server names.
type ConditionSpec struct {
	Name                  string   `yaml:"-" json:"name"`
	MCPServers            []string `yaml:"mcp_servers" json:"mcp_servers"`
	SystemPrompt          string   `yaml:"system_prompt" json:"system_prompt"`
	RequireMCPToolUse     bool     `yaml:"require_mcp_tool_use" json:"require_mcp_tool_use"`
	RequireMCPToolSuccess bool     `yaml:"require_mcp_tool_success" json:"require_mcp_tool_success"`
}

// ReportSettings choose what a run's report adds to its summary.
type ReportSettings struct {
	// SliceBy names a metadata field of the samples (MMLU's subject): the
	// summary then has each metric per value of it, under "slices".
	SliceBy string `yaml:"slice_by" json:"slice_by,omitempty"`
}

// Execution says how much work to do and how hard to retry.
type Execution struct {
	NumRepetitions int `yaml:"num_repetitions" json:"num_repetitions"`
	// MaxConcurrent is how many tasks run at once, and the ceiling of the
	// calls at once to a model's endpoint, which adapt to its rate limit
	// unless Adaptive is false.
	MaxConcurrent int   `yaml:"max_concurrent" json:"max_concurrent"`
	Adaptive      *bool `yaml:"adaptive" json:"adaptive,omitempty"`
	Retry         Retry `yaml:"retry" json:"retry"`
}

// Adapts says whether calls to a model's endpoint adapt to its rate limit
// (the default).
func (e Execution) Adapts() bool { return e.Adaptive == nil || *e.Adaptive }

// Retry is the backoff for calls that can succeed later.
type Retry struct {
	MaxAttempts           int     `yaml:"max_attempts" json:"max_attempts"`
	InitialBackoffSeconds float64 `yaml:"initial_backoff_seconds" json:"initial_backoff_seconds"`
	BackoffMultiplier     float64 `yaml:"backoff_multiplier" json:"backoff_multiplier"`
}

// Price is what a model costs per million tokens, in USD. Cache reads and
// writes of a provider's prompt cache have rates of their own; 0 means the
// usual ratio to the input price (CacheReadRatio, CacheWriteRatio).
type Price struct {
	InputPerMTok      float64 `yaml:"input_per_mtok" json:"input_per_mtok"`
	OutputPerMTok     float64 `yaml:"output_per_mtok" json:"output_per_mtok"`
	CacheReadPerMTok  float64 `yaml:"cache_read_per_mtok" json:"cache_read_per_mtok,omitempty"`
	CacheWritePerMTok float64 `yaml:"cache_write_per_mtok" json:"cache_write_per_mtok,omitempty"`
	// BatchDiscount is the share of the price a call sent in a batch saves
	// (0.5: half price); nil is DefaultBatchDiscount.
	BatchDiscount *float64 `yaml:"batch_discount" json:"batch_discount,omitempty"`
}

// The usual prices of prompt-cache tokens, as a share of the input price:
// what Anthropic charges for a cache read and a five-minute cache write.
const (
	CacheReadRatio  = 0.1
	CacheWriteRatio = 1.25
	// OpenAICacheReadRatio is what OpenAI charges, at most, for a prefix
	// its own cache holds: half the input price (gpt-4o; later models less).
	OpenAICacheReadRatio = 0.5
)

// AnthropicModel reports whether a model is one of Anthropic's, whose
// prompt cache the usual cache rates are Anthropic's.
func AnthropicModel(model string) bool {
	return strings.Contains(strings.ToLower(model), "claude")
}

// Cost is what a call costs at this price, in USD: in counts every input
// token, cacheRead and cacheWrite the part of them that went through the
// prompt cache, priced at the cache rates.
func (p Price) Cost(in, out, cacheRead, cacheWrite int) float64 {
	plain := max(in-cacheRead-cacheWrite, 0)
	return (float64(plain)*p.InputPerMTok + float64(out)*p.OutputPerMTok +
		float64(cacheRead)*p.CacheRead() + float64(cacheWrite)*p.CacheWrite()) / 1e6
}

// CacheRead is the price of a million cache-read tokens.
func (p Price) CacheRead() float64 {
	if p.CacheReadPerMTok > 0 {
		return p.CacheReadPerMTok
	}
	return p.InputPerMTok * CacheReadRatio
}

// CacheWrite is the price of a million cache-write tokens.
func (p Price) CacheWrite() float64 {
	if p.CacheWritePerMTok > 0 {
		return p.CacheWritePerMTok
	}
	return p.InputPerMTok * CacheWriteRatio
}

// datedSuffix is the release date model ids end in: claude-sonnet-4-5-20250929.
var datedSuffix = regexp.MustCompile(`-\d{8}$`)

// PriceFor finds a model's price: by its exact name, else by the name
// without a release date (claude-sonnet-4-5-20250929 is priced as
// claude-sonnet-4-5), else by the longest name it starts with followed by
// a dash. The key found is returned with it.
func PriceFor(prices map[string]Price, model string) (Price, string, bool) {
	if model == "" {
		return Price{}, "", false
	}
	if p, ok := prices[model]; ok {
		return p, model, true
	}
	if undated := datedSuffix.ReplaceAllString(model, ""); undated != model {
		if p, ok := prices[undated]; ok {
			return p, undated, true
		}
	}
	best := ""
	for k := range prices {
		if strings.HasPrefix(model, k+"-") && len(k) > len(best) {
			best = k
		}
	}
	if best != "" {
		return prices[best], best, true
	}
	if provider, name, ok := strings.Cut(model, "/"); ok && (provider == "anthropic" || provider == "openai") {
		return PriceFor(prices, name) // k-eval's "anthropic/claude-…" is priced as the model it names
	}
	return Price{}, "", false
}

// CodeExecution configures the code_execution evaluator.
type CodeExecution struct {
	TimeoutSeconds int  `yaml:"timeout_seconds" json:"timeout_seconds"`
	Unsandboxed    bool `yaml:"unsandboxed" json:"unsandboxed"` // run generated code without the sandbox: trusted datasets only
}

// Prompts overrides the prompt templates of the mcq, math and code kinds;
// an empty string keeps the built-in template.
type Prompts struct {
	MCQ  string `yaml:"mcq" json:"mcq,omitempty"`
	Math string `yaml:"math" json:"math,omitempty"`
	Code string `yaml:"code" json:"code,omitempty"`
}

// The ways a panel's scores of one answer make its headline score.
const (
	PanelMean   = "mean"
	PanelMedian = "median"
	PanelFirst  = "first"
)

// Panel lists the run's judges: the judges: list, or the one judge (none
// when it names no model).
func (c *Config) Panel() []Judge {
	if len(c.Judges) > 0 {
		return c.Judges
	}
	if c.Judge.Model == "" {
		return nil
	}
	return []Judge{c.Judge}
}

// Mode is how the panel's scores of an answer are combined: PanelMean
// unless the file says otherwise.
func (c *Config) Mode() string {
	if c.PanelMode == "" {
		return PanelMean
	}
	return c.PanelMode
}
