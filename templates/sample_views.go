package templates

// SampleView is one sample of a run: the question, the golden answer, and
// every response with its judgements, condition by condition.
type SampleView struct {
	Page       Page
	Report     ReportNav
	Kind       string
	Sample     SampleRow
	Nav        SampleNav
	Conditions []SampleConditionView
	Queue      *QueueBar // the review queue, for a reader who may review
	SideBySide bool      // the conditions' answers in columns, not one under another
	StackedURL string    // this page stacked, and side by side
	ColumnsURL string
}

// QueueOrder is an order the samples can be reviewed in.
type QueueOrder struct {
	Key, Label, About string
}

// QueueBar leads a reviewer through the samples in an order.
type QueueBar struct {
	Order    QueueOrder   // the order in use
	Orders   []QueueOrder // every order
	Active   bool         // the page was reached through the queue
	NextURL  string       // the next sample to review in this order
	StartURL string       // starts a queue, with ?order=
	AskName  bool         // the browser has no reviewer's name yet: asked once, here
}

// SampleNav leads back to the samples table and to the samples around this one.
type SampleNav struct {
	BackURL  string
	PrevURL  string // "" at the first
	NextURL  string // "" at the last
	Position int    // from 1, in the order the links follow
	Total    int
	Filtered bool // the order is the samples table's filter and sort
}

// SampleConditionView is a sample under one condition: its repetitions.
type SampleConditionView struct {
	Name    string
	Anchor  string
	Metrics []SampleMetric
	Results []ResultView
}

// SampleMetric is one metric's mean ± standard deviation over a condition's repetitions.
type SampleMetric struct {
	Label string
	Mean  string
	Std   string
	N     int
}

// ResultView is one repetition: the response or the error, what it cost, and how it was judged.
type ResultView struct {
	Repetition int
	Response   string // HTML rendered from markdown and sanitized
	Source     string // the response as the agent wrote it
	Empty      bool   // no response text
	Error      string
	ErrorKind  string // timeout, rate_limited, …; "" without an error
	TokensIn   int
	TokensOut  int
	Cost       string
	Latency    string
	Calls      int      // model calls or command starts, every turn and retry
	Retries    []string // the calls repeated after a failure, and why
	ToolCalls  []ToolCallView
	Judgements []JudgementView
	// Grids set every score of one evaluator side by side, when the answer
	// was judged more than once (judge repetitions, a panel).
	Grids []JudgeGrid
}

// JudgeGrid is every score one evaluator gave an answer: a column per judge
// call (judge and repetition), a row per metric.
type JudgeGrid struct {
	Evaluator string
	Columns   []string // "strict #1", or "#2" for a run's one judge
	Rows      []JudgeGridRow
}

// JudgeGridRow is one metric across the judge calls.
type JudgeGridRow struct {
	Metric string
	Cells  []JudgeGridCell
}

// JudgeGridCell is one judge call's score of a metric, with its reasoning.
type JudgeGridCell struct {
	Value, Reasoning string
	Has              bool
}

// ToolCallView is one call to an MCP tool, in turn order.
type ToolCallView struct {
	Turn      int
	Server    string
	Tool      string
	Arguments string
	Result    string // an excerpt
	Clipped   bool
	IsError   bool
	Denied    bool // the agent's permissions refused the tool
	Duration  string
	Thought   string // what the agent wrote before the call
}

// JudgementView is one evaluator's judgement of a response.
type JudgementView struct {
	Evaluator  string
	Repetition int    // from 1
	ShowRep    bool   // the run asked the judge more than once
	JudgeName  string // the panel judge; "" for a run's one judge
	Judge      bool   // an LLM judge: Raw is its output; else Raw is what was extracted
	Error      string
	Raw        string
	Detail     string
	Claims     []string
	Scores     []ScoreView
	Tokens     string
	Cost       string
	Latency    string
}

// ScoreView is one metric a judgement gave, with its reasoning.
type ScoreView struct {
	ID        int64
	Metric    string
	Value     string
	Reasoning string
	Verdicts  []VerdictView // every reviewer's, latest first
	Review    *ScoreReview  // the controls to give a verdict; nil when the page only shows
}

// VerdictView is one reviewer's verdict on a score.
type VerdictView struct {
	Reviewer string
	Override bool
	Value    string // the reviewer's value
	Note     string
	At       string
	Mine     bool // the reader's own
}

// ScoreReview is the form that records a verdict on one score.
type ScoreReview struct {
	Action   string // where the form posts
	CSRF     string
	Back     string // the sample page to come back to, with its query
	Min, Max string // the scale's bounds
	Step     string // 1 for whole numbers, "any" otherwise
	AskName  bool   // the browser has no reviewer's name yet: the form asks it
	Error    string // why the last verdict was refused
	Note     string // the reader's note so far
}

// Transcript is one sample of a run as the exported file shows it.
type Transcript struct {
	Sample     SampleRow
	Conditions []SampleConditionView
	Errors     int // failed answers
}
