// Package store is assay's record, in SQLite or Postgres: datasets,
// samples, conditions, runs, results, judgements, scores, reviews, tokens,
// sessions and leases — what happened, one transaction per write. What is
// derived from it is not the store's: a database opened with its tallies
// (OpenWith; readmodel/tally) has them kept in step inside the
// transactions that write the record, through one hook (Tallies).
package store

import (
	"encoding/json"
	"time"

	"assay"
	"assay/config"
)

// Dataset is an uploaded file of samples, identified by the SHA-256 of its bytes.
type Dataset struct {
	ID          int64
	Name        string
	Kind        assay.Kind
	SHA256      string
	Format      string // jsonl, json or csv
	Filename    string
	Size        int64
	QuestionKey string
	AnswerKey   string
	Samples     int
	CreatedAt   time.Time
	Origin      Origin // OriginEEE: made from imported result files, holding only their samples
}

// Origin is where a run or dataset came from.
type Origin string

// The origins of runs and datasets.
const (
	OriginAssay Origin = ""    // made by assay
	OriginEEE   Origin = "eee" // imported from EEE result files (k-eval's)
)

// Sample is one row of a dataset.
type Sample struct {
	ID         int64  // row id in the database
	DatasetID  int64  //
	Ordinal    int    // position in the file, from 1
	SampleID   string // the dataset's own id (task_id, id) or the line number
	Input      string // question or prompt
	Reference  string // golden answer (for code: the canonical solution)
	Choices    []string
	Test       string
	EntryPoint string
	Metadata   map[string]any
}

// RunStatus is where a run is in its life.
type RunStatus string

// The statuses of a run. Pending and running runs are resumed at start-up.
const (
	RunPending         RunStatus = "pending"
	RunRunning         RunStatus = "running"
	RunCompleted       RunStatus = "completed"
	RunFailed          RunStatus = "failed"
	RunCancelled       RunStatus = "cancelled"
	RunBudgetExhausted RunStatus = "budget_exhausted"
	// RunDeleting is a run being deleted, and RunImporting one being
	// imported: no page or list shows them.
	RunDeleting  RunStatus = "deleting"
	RunImporting RunStatus = "importing"
)

// Finished reports whether a run in status s will do no more work unless resumed.
func (s RunStatus) Finished() bool {
	return s != RunPending && s != RunRunning
}

// Run is dataset × conditions × repetitions with a frozen config snapshot.
type Run struct {
	ID          int64
	Name        string
	DatasetID   int64
	Status      RunStatus
	Config      *config.Config    // snapshot without secrets, decoded as it is read; nil in a list when it cannot be
	configErr   error             // why Config could not be read
	Conditions  []assay.Condition // snapshots taken at launch
	Repetitions int
	TotalTasks  int
	BudgetUSD   float64
	Message     string
	CreatedAt   time.Time
	StartedAt   *time.Time
	FinishedAt  *time.Time
	Origin      Origin // OriginEEE: imported, finished and read-only
	CreatedBy   string // the signed-in name of who launched or imported it; "" on an open server
	Tags        []string
	Note        string
	Headline    string // JSON of the main metric per condition, once the run has ended; "" until computed
	// RejudgedFrom is the run whose answers this one judged again; 0 for
	// a run that made its own.
	RejudgedFrom int64
}

// ToolCall is one call the agent made to an MCP tool.
type ToolCall struct {
	Turn       int             `json:"turn"`
	Server     string          `json:"server"`
	Tool       string          `json:"tool"`
	Arguments  json.RawMessage `json:"arguments,omitempty"`
	Result     string          `json:"result,omitempty"`
	IsError    bool            `json:"is_error"`
	DurationMS float64         `json:"duration_ms"` // wall-clock; k-eval's files give fractions of a millisecond
	// Denied: the agent refused to run the tool (Claude Code's permission
	// denials); IsError too.
	Denied bool `json:"denied,omitempty"`
	// Thought is what the agent wrote in the turn that made the call, before
	// it ("I will look this up…"): part of the transcript, kept on the
	// turn's first call; "" for none.
	Thought string `json:"thought,omitempty"`
}

// ErrorKind sorts a failed result or judgement by what went wrong, so that a
// report can count errors by kind. The message says the rest.
type ErrorKind string

// The kinds of error.
const (
	ErrorTimeout     ErrorKind = "timeout"      // no answer within a deadline
	ErrorRateLimited ErrorKind = "rate_limited" // 429 on every attempt
	ErrorServer      ErrorKind = "server_error" // 5xx on every attempt
	ErrorRefused     ErrorKind = "refused"      // another 4xx: a bad request, a bad key, no such model
	ErrorConnection  ErrorKind = "connection"   // no connection, or a dropped one
	ErrorBadResponse ErrorKind = "bad_response" // a reply that is not what was asked for
	ErrorTooLarge    ErrorKind = "too_large"    // a reply past the size bound
	ErrorGuard       ErrorKind = "guard"        // every answer broke a condition's guard
	ErrorTurnLimit   ErrorKind = "turn_limit"   // still calling tools after max_turns
	ErrorMCPServer   ErrorKind = "mcp_server"   // an MCP server that would not start
	ErrorCommand     ErrorKind = "command"      // a command agent that failed
	ErrorSandbox     ErrorKind = "sandbox"      // generated code could not be run
	ErrorOther       ErrorKind = "other"
)

// Result is one (sample, condition, repetition): the response or the error.
type Result struct {
	ID         int64
	RunID      int64
	SampleRow  int64 // Sample.ID
	Condition  string
	Repetition int
	Response   string
	Error      string
	ErrorKind  ErrorKind // of Error
	TokensIn   int
	TokensOut  int
	// CacheReadTokens and CacheWriteTokens are the part of TokensIn read
	// from, or written to, the provider's prompt cache.
	CacheReadTokens  int
	CacheWriteTokens int
	// BatchedCalls are the agent's calls that went in a batch, at the
	// batch price.
	BatchedCalls int
	CostUSD      float64
	CostSource   CostSource
	Model        string // the model that answered, when known
	LatencyMS    int64
	Attempts     int      // model calls or command starts, each turn and retry included
	Turns        int      // the agent's own count of its turns (Claude Code's num_turns); 0 when it did not say
	Retries      []string // the calls repeated after a failure: the failure and the wait, one each
	ToolCalls    []ToolCall
	CreatedAt    time.Time
	Judgements   []Judgement
}

// Judgement is one evaluator's scoring of a result: a judge call or a deterministic check.
type Judgement struct {
	ID               int64
	Evaluator        string
	JudgeRepetition  int
	Judge            string // the panel judge's name; "" for a run's one judge
	JudgeIndex       int    // the judge's place in the panel, from 0
	Seed             *int   // the seed the judge was asked with; nil for a deterministic evaluator
	Error            string
	ErrorKind        ErrorKind // of Error
	Attempts         int       // judge calls, retries and corrections included
	Raw              string    // raw judge output, or what was extracted
	Detail           string    // extracted value, stdout/stderr excerpt, failure reason
	UnverifiedClaims []string
	TokensIn         int
	TokensOut        int
	// CacheReadTokens and CacheWriteTokens are the part of TokensIn read
	// from and written to the provider's prompt cache, priced apart.
	CacheReadTokens  int
	CacheWriteTokens int
	// BatchedCalls are the calls of Attempts that went in a batch, at the
	// batch price.
	BatchedCalls int
	CostUSD      float64
	LatencyMS    int64
	Scores       []Score
}

// Score is one metric's value for one result and judge repetition.
type Score struct {
	ID        int64
	Metric    string
	Value     float64
	Reasoning string
}

// CostSource says where a result's cost came from.
type CostSource string

// The sources of a cost.
const (
	CostFromPrices CostSource = "prices" // tokens × the run's price table
	CostFromAgent  CostSource = "agent"  // what the agent reported (Claude Code's total_cost_usd), for a model the table lacks
	CostUnknown    CostSource = ""       // no price and no report: counted as free
)
