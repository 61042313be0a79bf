package templates

import (
	"fmt"
	"strings"
)

// RunForm is the new run form as the user typed it: every field is kept as
// text so a refused form comes back unchanged.
type RunForm struct {
	DatasetID  string
	Name       string
	Conditions []string // ids of the chosen conditions
	// UnsavedConditions are the conditions of the run the form was filled
	// from that are not among this server's (a run file's own).
	UnsavedConditions []string
	Evaluators        []string // names of the chosen evaluators
	Prompt            string   // the kind's prompt template, perhaps edited
	Assertions        string   // YAML list of assertions, as a run file's evaluators write them

	Repetitions string
	Concurrency string
	BudgetUSD   string
	// AllowUnpriced lets a run with a budget call models without a price.
	AllowUnpriced bool
	// FixedConcurrency keeps the calls at once at Concurrency rather than
	// adapting them to the provider's rate limit (execution.adaptive: false).
	FixedConcurrency bool
	// BatchJudge sends the judge calls through the provider's Batch API
	// (batch: {judge: true}).
	BatchJudge bool

	// The stopping rule: StopWhen "" for none, "decided" or "precise".
	StopWhen, StopMetric, StopAlpha, StopHalfWidth, StopMargin, StopMinSamples, StopSeed string

	AgentType        string // "openai" or "command"
	AgentCommand     string // command agents: the program and its arguments, one per line
	AgentTimeout     string // seconds for one answer
	AgentBaseURL     string
	AgentModel       string
	AgentModelName   string // the first model's name in a run over several; its model id when empty
	AgentModels      string // more models, one per line: "name: model" or "model"
	AgentKeyEnv      string
	AgentTemperature string
	AgentMaxTokens   string

	JudgeBaseURL     string
	JudgeModel       string
	JudgeKeyEnv      string
	JudgeTemperature string
	JudgeSeed        string
	SampleRate       string
	JudgeRepetitions string
	JudgeVarySeed    bool   // judge repetition k asks with seed + k
	JudgeMore        string // more judges of a panel, one per line: "name: model" or "model"
	Panel            string // mean, median or first

	CodeTimeout string // seconds, code datasets
	Unsandboxed bool   // run generated code without the sandbox: an explicit opt-in

	Error   string
	FromRun int64 // the run the defaults were taken from, if any
}

// DatasetOption is one dataset a run can use.
type DatasetOption struct {
	ID      int64
	Name    string
	Kind    string
	Samples int
}

// ConditionOption is one condition the form offers.
type ConditionOption struct {
	ID           int64
	Name         string
	SystemPrompt string
	Servers      int
	Checked      bool
}

// EvaluatorOption is one evaluator the form offers.
type EvaluatorOption struct {
	Name    string // the value sent: an evaluator's name, or judge:NAME for a saved rubric
	Label   string // as shown and reported
	About   string
	ForKind string // the only kind it scores; "" for every kind
	Judge   bool
	Saved   bool // a rubric from the Rubrics page
	Checked bool
	Prompt  string // what its judge is told; "" for a deterministic evaluator
}

// RunFormView is the new run page.
type RunFormView struct {
	Page          Page
	Form          RunForm
	Datasets      []DatasetOption
	Kind          string // of the chosen dataset
	Conditions    []ConditionOption
	Evaluators    []EvaluatorOption
	DefaultPrompt string // of the kind; "" for qa, whose samples are sent as they are
	Estimate      EstimateView
	CommandAgents bool // the server may start a command agent from this form
	Defaults      RunDefaults
}

// RunDefaults are what a run takes for the fields left empty, as the run's
// rules (config) set them: the form shows them as placeholders.
type RunDefaults struct {
	AgentTimeout, CodeTimeout                                 string
	JudgeTemperature, JudgeSeed, SampleRate, JudgeRepetitions string
	Concurrency                                               string
}

// EstimateView is the forecast shown before launch, or why there is none yet.
type EstimateView struct {
	Problem     string
	Samples     int
	Conditions  int
	Repetitions int
	Models      int      // the agent's models in a run over several; 0 or 1 for one
	Judges      []string // the judge evaluators
	SampleRate  float64
	JudgeReps   int
	AgentCalls  int
	JudgeCalls  int
	TokensIn    int
	TokensOut   int
	CostUSD     float64
	// LiveUSD is the cost with every call live, BatchUSD with the judge
	// calls in batches; Batched: the run sends them so (CostUSD is BatchUSD).
	LiveUSD, BatchUSD float64
	Batched           bool
	Unpriced          []string   // models without a price
	UnsetEnv          []UnsetVar // variables the run needs that the server's environment lacks
	Warnings          []string   // what the settings say that their author should know (a judge's temperature above 0)
	BudgetUSD         float64    // 0: none
}

// BudgetShort is the share of the estimate the budget covers when it is
// well below it (under 80%), else 0.
func (e EstimateView) BudgetShort() float64 {
	if e.BudgetUSD <= 0 || e.CostUSD <= 0 || e.BudgetUSD >= 0.8*e.CostUSD {
		return 0
	}
	return e.BudgetUSD / e.CostUSD
}

// Tokens formats a token count for people: 950, 12.3k, 1.2M.
func Tokens(n int) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 10_000:
		return fmt.Sprintf("%.0fk", float64(n)/1e3)
	case n >= 1_000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

// firstLine is the first non-blank line of s, or empty when there is none.
func firstLine(s, empty string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return empty
}

// Count writes n with a noun, plural when n is not 1: "1 sample", "3 samples".
func Count(n int, noun string) string {
	return Int(n) + " " + plural(n, noun)
}

// plural is noun as n of it are said: "sample" for one, "samples" else.
func plural(n int, noun string) string {
	switch {
	case n == 1:
		return noun
	case strings.HasSuffix(noun, "ch"), strings.HasSuffix(noun, "s"):
		return noun + "es"
	}
	return noun + "s"
}

// oneOrMany is one when n is 1, else many: "is" or "are", "it" or "them".
func oneOrMany(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// listSep is what follows item i of n in a list written out: ", " or "".
func listSep(i, n int) string {
	if i < n-1 {
		return ", "
	}
	return ""
}

// freeNote ends the warning about models without a price.
func freeNote(models int) string {
	if models == 1 {
		return "— its calls are counted as free."
	}
	return "— their calls are counted as free."
}

// judgeNote says which judges score which share of the answers, how often.
func judgeNote(e EstimateView) string {
	if len(e.Judges) == 0 {
		return "no judge evaluator"
	}
	return strings.Join(e.Judges, " and ") + " " + judgeShare(e.SampleRate, e.JudgeReps)
}

// judgeShare says which share of the answers a judge scores, how often.
func judgeShare(rate float64, reps int) string {
	share := "on every answer"
	if rate < 1 {
		share = fmt.Sprintf("on %.4g%% of answers", rate*100)
	}
	if reps > 1 {
		share += fmt.Sprintf(", %d times each", reps)
	}
	return share
}

// commandPlaceholder shows a command agent's lines: Claude Code with the condition's MCP servers.
const commandPlaceholder = "claude\n-p\n{query}\n--system-prompt\n{system_prompt}\n--mcp-config\n{mcp_config}\n--output-format\njson"

// UnsetVar is a variable the run needs and the server lacks, and where.
type UnsetVar struct {
	Name  string
	Where string
}
