package templates

import (
	"fmt"
	"math"
	"strings"
)

// ReportView is a run's report: the run page once it has results, the page
// of a share link, and the self-contained HTML export.
type ReportView struct {
	Base string // prefixes the report's URLs: "/runs/7" or "/r/<token>"
	// Shared is true through a share link and in the export: no forms, no
	// key variable names or base URLs, no links to owner-only pages.
	Shared bool
	// Static is true in the exported file: no link leaves the file.
	Static  bool
	Polling bool   // the run is still working: the report fetches itself again
	Query   string // the report's query string ("?a=x&b=y"), kept when it refreshes
	Version string // the token of the report's version: a refresh sends it, and nothing changed is answered 204
	Live    bool   // the page has the run's live progress: the report refreshes with it
	Facts   ReportFacts
	Summary ReportSummary
	Charts  []ChartView
	Paired  PairedView
	Review  *ReviewView
	Audit   *AuditView // the latest judge audit; nil for a run without a judge
	// Variance is "Where the variance comes from"; nil without two samples scored.
	Variance *VarianceView
	// Slices is "By slice"; nil when the samples have no field to slice by.
	Slices *SliceView
	// OneJudge is set when the report shows one panel judge's scores alone.
	OneJudge *OneJudgeView
	// RoutingURL leads to the Routing page of a run over several models; "" otherwise.
	RoutingURL string
	// JudgesURL leads to the judges of the run's answers side by side,
	// where another run judged them again; "" otherwise.
	JudgesURL string
	// Routing is the replay with the default settings, in the exported file
	// of a finished run over several models.
	Routing *RoutingView
}

// OneJudgeView says whose scores a one-judge report shows, and leads back
// to the panel's.
type OneJudgeView struct {
	Name     string
	Panel    []string
	PanelURL string
}

// SliceView breaks the report down by a metadata field of the samples.
type SliceView struct {
	Fields      []SliceFieldOption
	Field       string // chosen; "" for none
	Message     string // why the field asked for cannot slice
	Static      bool   // the exported file: no form
	A, B        string // the paired comparison's conditions; also kept by the form
	View, Delta string // kept by the form
	Metrics     []ReportMetric
	Conditions  []string
	Rows        []SliceRow
	Paired      []SlicePairedRow // B − A within each value; empty without a pair
	Charts      []ChartView
}

// SliceFieldOption is a field the report can be sliced by.
type SliceFieldOption struct {
	Name     string
	Values   int
	Selected bool
}

// SliceRow is one value of the field: its cells are metric by metric, then
// condition by condition.
type SliceRow struct {
	Value   string
	Samples int
	Cells   []SliceCell
}

// SliceCell is a metric's mean under a condition within a slice.
type SliceCell struct {
	Has  bool
	Mean string
	CI   string // the interval and the scores, for a tooltip
	N    int    // samples scored
}

// SlicePairedRow is the paired comparison within one value, metric by metric.
type SlicePairedRow struct {
	Value string
	Cells []SlicePairedCell
}

// SlicePairedCell is B − A on one metric within a slice.
type SlicePairedCell struct {
	Diff, CI, Direction string
	N                   int
}

// VarianceView splits each metric's variance into samples, agent and judge.
type VarianceView struct {
	FirstCondition   string // what the minimum detectable differences are against
	JudgeRepetitions int
	Rows             []VarianceRow
	Sentences        []VarianceSentence
	Notes            []string         // which parts the run cannot tell apart, and how it could
	Consistency      []ConsistencyRow // the judge against itself; empty when no answer was judged twice
	PanelJudges      []string         // a judge panel's judges, in its order
	JudgeURLs        []string         // each panel judge's own report; empty in the exported file
	Panel            []PanelRow       // each judge per metric and condition; empty without a panel
	Charts           []ChartView      // one per condition
}

// VarianceRow is one metric under one condition.
type VarianceRow struct {
	Condition, Metric            string
	Total                        string // the variance, on the metric's scale
	Sample, Agent, Judge         string // each part's share with its interval; "—" when not measured
	AgentMeasured, JudgeMeasured bool
	MDD                          string // against the first condition; "" for it
}

// VarianceSentence says what dominates one metric's spread under the
// conditions named (every condition of the run when Every): the conditions
// whose sentence is the same share one.
type VarianceSentence struct {
	Lead   string   // "The agent's part is the largest"
	Items  []string // "baseline · factual_adherence (87%)", or a metric under every condition
	Advice string   // what narrows it
}

// ConsistencyRow is the judge against itself on one metric under one condition.
type ConsistencyRow struct {
	Metric, Condition string
	Answers           int
	Exact, MAD, Alpha string
}

// ReviewView is what reviewers said of a run's scores, and the switch of the
// summary between the judge's values and the reviewed ones.
type ReviewView struct {
	Verdicts, Scored, Overridden int
	Reviewers                    []string // hidden on shared pages
	Applied                      bool     // the report shows the scores with reviews applied
	AsJudgedURL, AppliedURL      string
	Coverage                     []CoverageRow
	Agreement                    []AgreementRow
	Heatmaps                     []ChartView
	Queue                        *QueueBar // starts the review queue, for a reader who may review
	JudgeErrors                  []JudgeErrorsView
}

// JudgeErrorsView is where a panel's judges err against people on one
// metric: a row per judge, with the correlations of its errors with each
// judge's, and what that means for the panel's mean.
type JudgeErrorsView struct {
	ID, Metric    string
	Judges        []string
	Rows          []JudgeErrorRow
	PanelAbsError string
	Verdict       string // "The panel's mean errs by 0.56 on average, less than its best judge…"
}

// JudgeErrorRow is one judge's errors against people.
type JudgeErrorRow struct {
	Judge, MeanError, MeanAbsError string
	Correlations                   []string
}

// CoverageRow is how many of a metric's scores under a condition were reviewed.
type CoverageRow struct {
	Metric, Condition, Share string
	Reviewed, Total          int
}

// AgreementRow compares the judge with the reviewers on one metric.
type AgreementRow struct {
	Metric                                     string
	Reviewed, Overridden, AlphaN               int
	Exact, Within1, MAD, Kappa, KappaCI, Alpha string
	JudgeMean, HumanMean                       string
}

// ReportFacts are the header of a report: the run's settings and totals.
type ReportFacts struct {
	Run         RunFacts
	Status      string
	Message     string // why the run stopped, or its error
	Started     string
	Duration    string // "" before the run starts
	Done        int
	Total       int
	Errors      int
	JudgeErrors int
	TokensIn    int
	TokensOut   int
	CostUSD     float64
}

// ReportSummary is the summary of a run: one row per condition.
type ReportSummary struct {
	Metrics []ReportMetric
	Rows    []ReportRow
	PassKs  []string // the k of pass@k, for a code run with repetitions; the rows' PassAtK follow them
	// Consistency is each pass/fail metric's under each condition, over
	// repetitions; ConsistencyKs the k its rows' cells follow.
	Consistency   []RepeatRow
	ConsistencyKs []string
	// Stopping is the run's stopping rule at work; nil for a run without.
	Stopping *StoppingView
	// Corrected are the means corrected by people's reviews, each
	// condition's metrics with enough reviewed in a review order.
	Corrected []CorrectedRow
}

// CorrectedRow is a metric's mean under a condition as judged and as
// people's reviews correct it (prediction-powered inference).
type CorrectedRow struct {
	Condition, Metric string
	Judged, Mean, CI  string
	Shift             string
	Reviewed, Of      int
	Order             string // the review order's label
	NotUsed           int    // answers reviewed outside the order's first samples
}

// RepeatRow is a pass/fail metric's consistency across repetitions under
// a condition.
type RepeatRow struct {
	Condition, Metric string
	FlipRate, Kappa   string // Kappa "—" when undefined
	Ks                []RepeatCell
}

// RepeatCell is pass^k and pass@k at one k.
type RepeatCell struct {
	PassHat, PassAt string
}

// ReportMetric heads a column group of the summary.
type ReportMetric struct {
	Evaluator string
	Name      string
	Scale     string // 1–5, 0–1 or pass/fail
	Digits    int    // decimals its values are shown with
}

// Label names the metric, with its evaluator when the two differ.
func (m ReportMetric) Label() string {
	if m.Name == m.Evaluator {
		return m.Name
	}
	return m.Evaluator + " · " + m.Name
}

// ReportRow is one condition of the summary.
type ReportRow struct {
	Condition   string
	Results     int
	Errors      int
	JudgeErrors int
	Retried     int
	// ErrorKinds and JudgeErrorKinds say what the errors were, most common
	// first: "2 timeout · 1 rate_limited"; "" without errors.
	ErrorKinds      string
	JudgeErrorKinds string
	TopErrors       []ErrorLine  // the most common messages
	PassAtK         []PassCell   // one per ReportSummary.PassKs
	ErrorsURL       string       // the samples table filtered to this condition's errors; "" in the export
	ToolCalls       int          // MCP tool calls the agent made
	ToolErrors      int          // of which failed
	Cells           []ReportCell // one per ReportSummary.Metrics
	CostUSD         float64
	TokensIn        int
	TokensOut       int
	LatencyMS       float64
	Quality         string // "" without scores
	PerDollar       string // "" when the condition cost nothing recorded
}

// ErrorLine is one error message and how often it came.
type ErrorLine struct {
	Count   int
	Judge   bool // the judge's or an evaluator's, not the agent's
	Kind    string
	Message string
}

// ReportCell is one metric under one condition.
type ReportCell struct {
	Has          bool // false: no score of this metric under the condition
	Mean         float64
	Std          float64 // over per-sample means
	Stderr       float64
	CILo         float64
	CIHi         float64
	N            int // scores
	Samples      int
	Spread       float64 // mean per-sample std over repetitions
	Disagreement float64 // share of samples whose repetitions differ
	Corrected    string  // the mean corrected by reviews; "" without
}

// ChartView is one chart: an ECharts option as JSON, drawn by report.js.
type ChartView struct {
	ID      string
	Option  string // JSON; attributes escape it, JSON.parse reads it back
	Height  int    // pixels
	Caption string // how to read the chart
}

// PairedView compares condition B with condition A, sample by sample.
type PairedView struct {
	Conditions []string // to choose from
	A          string
	B          string
	Message    string // why there is no comparison
	Rows       []PairedRow
	Gaps       []GapRow
	Metrics    []ReportMetric // heads of the gap columns
	View       string         // kept by the samples-needed form
	Delta      string         // the difference typed to detect, if any
	DeltaError string         // why it is not a difference
	AllPairs   []PairTestRow  // every pair's test, with three conditions or more
	// AllPairsDiffer are the tests whose adjusted p is below 0.05, smallest
	// first: shown above the whole list when it is long (many conditions).
	AllPairsDiffer []PairTestRow
}

// PairTestRow is one pair of conditions on one metric, with its p-value
// adjusted for every pair of the metric (Holm).
type PairTestRow struct {
	Metric, A, B, Diff string
	N                  int
	P, HolmP           string
	Significant        bool // the adjusted p is below 0.05
}

// PairedRow is one metric of a paired comparison (B − A).
type PairedRow struct {
	Metric ReportMetric
	MeanA  float64
	MeanB  float64
	Diff   float64
	CILo   float64
	CIHi   float64
	Wins   int // samples where B scored higher
	Ties   int
	Losses int // samples where A scored higher
	N      int
	MDD    float64 // the smallest true difference these samples detect (α = 0.05, power 80%)
	Needed string  // the samples needed to detect the difference typed; "" when none was
	// Corrected is B − A corrected by people's reviews, with its 95%
	// interval; "" where too few answers of both were reviewed.
	Corrected string
}

// Direction says whether the interval excludes zero: "better", "worse" or "".
func (r PairedRow) Direction() string {
	switch {
	case r.N > 1 && r.CILo > 0:
		return "better"
	case r.N > 1 && r.CIHi < 0:
		return "worse"
	}
	return ""
}

// GapRow is a sample whose scores differ between the two sides.
type GapRow struct {
	URL      string // the sample page; "" in the exported file
	Name     string // the dataset's own id
	Question string // truncated
	A        []string
	B        []string
	Gap      float64 // mean B − A over the metrics, each rescaled to 0–1
}

// Num formats a score with d decimals.
func Num(v float64, d int) string {
	if math.IsNaN(v) {
		return "—"
	}
	return fmt.Sprintf("%.*f", d, v)
}

// Signed formats a difference with its sign.
func Signed(v float64, d int) string {
	return fmt.Sprintf("%+.*f", d, v)
}

// Pct formats a share as a whole percentage.
func Pct(v float64) string {
	return fmt.Sprintf("%.0f%%", 100*v)
}

// Millis formats a latency: 850 ms, 2.4 s.
func Millis(ms float64) string {
	if ms >= 1000 {
		return fmt.Sprintf("%.1f s", ms/1000)
	}
	return fmt.Sprintf("%.0f ms", ms)
}

// AuditView is the latest judge audit of a run (assay audit).
type AuditView struct {
	Lines []string // a line per probe, as assay audit prints them
	At    string   // when it was made; "" before any audit
	Calls int
	Cost  string
}

// AuditStart is the owner's form that starts a judge audit of a finished
// run, or the note that one is under way.
type AuditStart struct {
	Running bool
}

// ReportOwner is what only the run's owner sees on its report: exports,
// share links and the other runs of the dataset.
type ReportOwner struct {
	RunID       int64
	CanDelete   bool // the run is over and the user may delete it
	Results     int  // what deleting it deletes
	CSRF        string
	Query       string // the report's query string, for the HTML export
	Shares      []ShareRow
	ReviewLinks []ReviewLinkRow
	OtherRuns   []OtherRun
	Tags, Note  string      // what people said of the run
	CanEdit     bool        // the user may change them
	Audit       *AuditStart // the judge audit's form; nil unless the run is over and has a judge
	Rejudge     string      // the judge keys the form to judge the answers again starts with; "" without the form
	NewLink     Flash       // a link just made, shown in its section (Place "sharing" or "reviewing")
}

// ShareRow is one share link of a run.
type ShareRow struct {
	Key       string // names the link (its token is not kept)
	Created   string
	CreatedBy string
	Revoked   string // "" while the link works
}

// OtherRun is another run of the same dataset, to compare with.
type OtherRun struct {
	ID         int64
	Name       string
	Status     string
	Created    string
	Conditions string
	CompareURL string
}

// SharedReportView is the page of a share link.
type SharedReportView struct {
	Page   Page
	Report ReportView
}

// InlineAssets are the stylesheets and scripts an exported report carries inline.
type InlineAssets struct {
	CSS string
	JS  []string
}

// CompareView compares two runs of the same dataset, condition by condition.
type CompareView struct {
	Page       Page
	A          CompareRun
	B          CompareRun
	Dataset    DatasetRow
	SwapURL    string
	Conditions []CompareCondition
	Unmatched  []string        // conditions in only one of the runs
	Settings   []ConfigDiffRow // the settings in which the runs differ
	SameCount  int             // settings they share
}

// ConfigDiffRow is a setting whose value differs between two runs; "—" is unset.
type ConfigDiffRow struct {
	Key, A, B string
}

// CompareRun is one of the compared runs.
type CompareRun struct {
	ID      int64
	Name    string
	Status  string
	Created string
}

// CompareCondition is one condition of both runs: per metric run A against
// run B, and the samples that regressed in B.
type CompareCondition struct {
	Name   string
	Paired PairedView
}

// HasErrors reports whether any condition has an agent or judge error.
func (s ReportSummary) HasErrors() bool {
	for _, r := range s.Rows {
		if r.Errors+r.JudgeErrors > 0 {
			return true
		}
	}
	return false
}

// HasTools reports whether any condition's agent called MCP tools.
func (s ReportSummary) HasTools() bool {
	for _, r := range s.Rows {
		if r.ToolCalls > 0 {
			return true
		}
	}
	return false
}

// RefreshURL is where the report fetches itself again while the run works.
func (v ReportView) RefreshURL() string {
	sep := "?"
	if v.Query != "" {
		sep = "&"
	}
	u := v.Base + "/report" + v.Query + sep + "since=" + v.Version
	if v.Live {
		u += "&live=1"
	}
	return u
}

// refreshTrigger is when a live report refreshes: with the progress above
// it, or on its own every two seconds where there is none (a share link).
func refreshTrigger(live bool) string {
	if live {
		return "run-progress from:body"
	}
	return "every 2s"
}

// The titles of a summary's cells that one sample or one repetition leaves undefined.
const (
	oneSampleNote     = "one scored sample: no spread over samples, so no standard deviation, standard error or interval"
	oneRepetitionNote = "one score per sample: repetitions are needed to see how much one sample moves between tries"
)

// PassCell is pass@k of one condition for one k, with its interval.
type PassCell struct {
	Value, CI string // "" when no problem had k attempts
}

// PanelRow is a judge panel on one metric under one condition: each judge's
// mean and offset from the panel, and Krippendorff's alpha between them.
type PanelRow struct {
	Condition, Metric string
	Means, Offsets    []string // by judge, in the panel's order
	Alpha             string
}

// verdictsSentence says how many verdicts there are, on how many scores,
// and by whom: "5 verdicts on 5 scores by Dr Lee."
func verdictsSentence(r *ReviewView) string {
	s := Count(r.Verdicts, "verdict") + " on " + Count(r.Scored, "score")
	if len(r.Reviewers) > 0 {
		s += " by " + strings.Join(r.Reviewers, ", ")
	}
	return s + "."
}

// compactSummary reports whether the summary has too many metrics to show
// each one's std and stderr.
func compactSummary(s ReportSummary) bool { return len(s.Metrics) > 3 }

// summaryColumns is how many columns each metric has in the summary.
func summaryColumns(s ReportSummary) int {
	if compactSummary(s) {
		return 3
	}
	return 5
}

// JudgesView sets side by side the runs that judged the same answers.
type JudgesView struct {
	Reviewed bool // somebody reviewed some of the answers: the columns against people are shown
	Metrics  []string
	Rows     []JudgeRunRow
	Differ   []DisagreeRow // the answers where the judges differ most
}

// JudgeRunRow is one run's judge and its figures.
type JudgeRunRow struct {
	RunID        int64
	Name, Judge  string
	Source       bool // the run that made the answers
	Evaluators   []string
	Cells        []JudgeCell // by metric, as JudgesView.Metrics
	PerJudgement string      // what a judgement cost; "—" unpriced
	Audit        []string    // the latest audit's lines
}

// JudgeCell is a judge's figures on one metric.
type JudgeCell struct {
	Mean, Corrected string // over conditions; Corrected "" where reviews do not correct every condition's
	Reviewed        int
	Kappa, Alpha    string
	MAE             string // with its 95% CI
}

// DisagreeRow is an answer the judges scored differently.
type DisagreeRow struct {
	Metric, Condition string
	Sample            int64  // its row
	SampleID          string // the dataset's own id
	Repetition        int
	URL               string
	Scores            []string // by run, as JudgesView.Rows
}

// correctedAny reports whether any row has a difference corrected by reviews.
func correctedAny(rows []PairedRow) bool {
	for _, r := range rows {
		if r.Corrected != "" {
			return true
		}
	}
	return false
}
