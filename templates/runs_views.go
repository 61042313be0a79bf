package templates

// RunRow is one run in the list.
type RunRow struct {
	ID         int64
	Name       string
	Status     string
	DatasetID  int64
	Dataset    string
	Conditions []string // the conditions, each once in a run over several models
	Models     int      // the models of a run over several
	Done       int
	Total      int
	Errors     int
	CostUSD    float64
	Started    string
	Finished   string
	Imported   bool // from EEE result files
	// RejudgedFrom is the run whose answers this one judged again; 0 for
	// a run that made its own.
	RejudgedFrom int64
	Tags         []string
	Note         string
	Headline     *Headline // a finished run's main metric per condition
}

// Headline is a run's main metric per condition, in the list of runs.
type Headline struct {
	Metric string
	Cells  []HeadlineCell
}

// HeadlineCell is one condition's mean, with its interval in the title.
type HeadlineCell struct {
	Condition, Mean, Title string
}

// shownConditions is how many conditions a row of the runs list names:
// a sweep of twenty made each of its rows ten lines tall. The others are
// counted, and named in the cell's title.
const shownConditions = 4

// RunsView is the list of runs, newest first.
type RunsView struct {
	Page    Page
	Query   string // the search: words found in a run's name, tags, note, dataset or conditions
	All     int    // runs before the search
	Matched int    // runs the search found (all of them without one)
	Pager   Pager  // the page of them shown
	Runs    []RunRow
	Import  ImportForm
}

// ImportForm is the Runs page's form that imports a run from EEE files.
type ImportForm struct {
	Error  string // what was wrong with the files; the form opens with it
	MaxMiB int64
}

// RunView is one run's page: its live progress, then its report.
type RunView struct {
	Page     Page
	Report   ReportView
	Owner    ReportOwner
	Progress RunProgress
}

// RunFacts are a run's settings, frozen at launch.
type RunFacts struct {
	ID               int64
	Name             string
	Dataset          DatasetRow
	Conditions       []string
	ConditionDetails []ConditionDetail // what each condition gave the agent
	PromptTemplate   string            // the user message's template for the dataset's kind
	Repetitions      int
	AgentModel       string
	AgentBaseURL     string
	AgentKeyEnv      string   // the variable's name; keys are never shown
	AgentCommand     string   // a command agent's program and arguments; "" for openai
	AgentPassed      []string // the variables passed on to Claude Code, by name
	AgentTemperature string   // "" when the server's default
	AgentMaxTokens   int
	JudgeModel       string
	// SameFamily warns that a judge is of the family of a model it
	// judges; "" when none is.
	SameFamily       string
	Panel            []PanelJudge  // a judge panel's judges; empty for one judge
	PanelMode        string        // how the panel's scores make the headline: mean, median or first
	JudgePrompts     []JudgePrompt // what each judge evaluator is told
	JudgeBaseURL     string
	JudgeTemperature float64
	JudgeSeed        int
	Evaluators       []string
	SampleRate       float64
	JudgeRepetitions int
	Concurrency      int
	Batched          string // which calls go in batches ("judge calls", "the agent's and judge calls"); "" for none
	BudgetUSD        float64
	Unsandboxed      bool       // generated code may run without the sandbox
	Prices           []RunPrice // of the models the run calls, from its snapshot
	Created          string
	Imported         bool   // from EEE result files: finished and read-only
	CreatedBy        string // who launched or imported it; "" on an open server
	RejudgedFrom     int64  // the run whose answers this one judged again; 0 for none
}

// RunPrice is what a run's model costs, as the run was launched with.
type RunPrice struct {
	Model         string
	Priced        bool
	PricedAs      string // the price table's name for it, when not the same (a dated id priced by its undated name)
	InputPerMTok  float64
	OutputPerMTok float64
	CacheRead     float64 // per million cache-read tokens
	CacheWrite    float64 // per million cache-write tokens
	AgentReported bool    // without a price, the cost is what the agent reported
}

// ReviewLinkRow is one review link of a run.
type ReviewLinkRow struct {
	Key, Name, Created, CreatedBy, Revoked string // Key names the link (its token is not kept)
	Verdicts                               int
}

// RunProgress is the live part of a run page, polled while the run works.
type RunProgress struct {
	ID        int64
	Status    string
	Polling   bool // pending or running: the fragment asks to be fetched again
	CanCancel bool
	CanResume bool
	CanRetry  bool   // a finished run with failed tasks or judge calls: they can be done again
	Retry     string // what the retry does: "2 failed tasks and the judging of 3 answers"
	Message   string // the run's error, or why it stopped
	Paused    bool   // Message says why the run waits for the database
	InFlight  string // "4 calls in flight, the oldest for 12s", while the run executes here
	// Batches says how the batches of the run's judge calls stand.
	Batches string
	// Limits say, per endpoint the run calls, how many calls its adaptive
	// limit allows at once and how many were answered 429, while the run
	// executes here.
	Limits []string
	// Executor says which process executes the run when it is another
	// than this server (another server on the same database, or an assay
	// run), and how far it got.
	Executor    string
	Stalled     bool // the oldest call in flight has taken minutes: no estimate is given
	Interrupted bool // no process executes the unfinished run: Message says who did and what now
	CSRF        string
	Done        int
	Answered    int // with judges in batches, answers done (judged or waiting); 0 when none wait
	Total       int
	Errors      int
	JudgeErrors int
	Retried     int
	CostUSD     float64
	Started     string
	Finished    string
	Elapsed     string
	ETA         string // "" when unknown or finished
	Conditions  []ConditionProgress
}

// ConditionProgress is how far one condition of a run has come.
type ConditionProgress struct {
	Name        string
	Done        int
	Total       int
	Errors      int
	JudgeErrors int
	Retried     int
	CostUSD     float64
}

// Percent is done/total as a whole percentage, for progress bars.
func Percent(done, total int) int {
	if total <= 0 {
		return 0
	}
	return min(100, done*100/total)
}

// ConditionDetail is what a condition gave the agent, as the run kept it.
type ConditionDetail struct {
	Name         string
	SystemPrompt string
	Servers      []string // one line per MCP server; commands, URLs and header names only off share links
	Guards       []string
}

// JudgePrompt is the system prompt of one judge evaluator of a run.
type JudgePrompt struct {
	Evaluator, Prompt string
}

// PanelJudge is one judge of a run's panel.
type PanelJudge struct {
	Name, Model string
	Temperature float64
	Seed        int
}
