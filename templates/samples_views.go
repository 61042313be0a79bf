package templates

import "fmt"

// ReportNav is the head of every page of a run's report: which run, and the
// way back to its report. Base is "/runs/7" or "/r/<token>".
type ReportNav struct {
	RunID   int64
	RunName string
	Dataset string
	Kind    string
	Base    string
}

// SamplesView is the samples table of a run: one row per sample and condition.
type SamplesView struct {
	Page       Page
	Report     ReportNav
	Filter     SampleFilterForm
	Conditions []string
	Metrics    []MetricOption
	Columns    []SortColumn // the metric columns, then spread, errors, claims
	Sample     SortColumn   // the sample and condition columns
	Condition  SortColumn
	Rows       []SampleTableRow
	Matching   int // rows that pass the filter
	All        int // rows of the run
	Pager      Pager
	ClearURL   string
	Queue      *QueueBar   // starts the review queue, for a reader who may review
	Grid       *SampleGrid // the grid view: one row per sample, a column per condition; nil for the table
	TableURL   string      // this view as the table, and as the grid
	GridURL    string
}

// SampleGrid is the samples as a grid: a row per sample, a column per
// condition, one metric in each cell.
type SampleGrid struct {
	Metric     string // the metric the cells show
	Conditions []string
	Rows       []SampleGridRow
}

// SampleGridRow is one sample across the conditions.
type SampleGridRow struct {
	URL, Name, Question, Answer string
	Cells                       []SampleGridCell // one per condition
}

// SampleGridCell is a sample under one condition.
type SampleGridCell struct {
	Shown  bool // the condition has a result for the sample that passes the filter
	Metric MetricCell
	Errors int
	URL    string
}

// SampleFilterForm is the filter as the form shows it.
type SampleFilterForm struct {
	Condition string
	Metric    string
	Below     string
	Spread    string
	Claims    bool
	Errors    bool
	Search    string
	Sort      string
	Dir       string
	Review    string // reviewed, unreviewed, overridden
	Reviewer  string
	Reviews   bool // the page may filter by verdicts (not through a share link)
}

// MetricOption is a metric the filter can look at.
type MetricOption struct {
	Key   string // evaluator.metric
	Label string
}

// SortColumn is a column header that sorts the table when clicked.
type SortColumn struct {
	Label  string
	Title  string // what the column holds
	URL    string // sorts by this column; again in the other direction when active
	Active bool
	Desc   bool
	Num    bool
}

// SampleTableRow is one sample under one condition.
type SampleTableRow struct {
	URL         string // the sample page, keeping the table's query
	Name        string // the dataset's own id of the sample
	Ordinal     int
	Question    string // truncated
	Answer      string // the golden answer, truncated
	Condition   string
	Metrics     []MetricCell
	Spread      string
	Results     int
	Errors      int
	JudgeErrors int
	Claims      int
}

// MetricCell is one metric's mean ± standard deviation over repetitions.
type MetricCell struct {
	Mean  string // "" when the metric has no score
	Std   string
	Title string
}

// SortArrow marks the active sort column.
func SortArrow(c SortColumn) string {
	switch {
	case !c.Active:
		return ""
	case c.Desc:
		return "\u00a0▼"
	}
	return "\u00a0▲"
}

// AriaSort is a column's aria-sort attribute.
func AriaSort(c SortColumn) string {
	switch {
	case !c.Active:
		return "none"
	case c.Desc:
		return "descending"
	}
	return "ascending"
}

func itoa64(n int64) string { return fmt.Sprint(n) }

// errorsOrNone labels a grid cell without a score.
func errorsOrNone(errors int) string {
	if errors > 0 {
		return Count(errors, "error")
	}
	return "no score"
}
